import MyelineConfiguration

/// The agent's configuration mistakes are the shared ``MyelineConfiguration/ConfigurationError``.
typealias ConfigurationError = MyelineConfiguration.ConfigurationError

/// The agent's keys are shared ``MyelineConfiguration/ConfigurationKey``s; its list is `ConfigurationKey.all`.
typealias ConfigurationKey = MyelineConfiguration.ConfigurationKey
