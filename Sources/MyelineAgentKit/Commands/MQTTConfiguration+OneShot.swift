import FoundationEssentials
import MQTT

extension MQTTConfiguration {
    /// This configuration with a client id of a one-shot command's own (an intent,
    /// `remove-integrations`): the configured one followed by `-cli-` and 8 random characters, so that a broker which does not
    /// bind client ids to usernames never disconnects the running agent for it. (One that binds
    /// them, as production.conf does, gives the command its username: it then closes the connection
    /// of an agent running with the same account.)
    func withOneShotClientID() -> MQTTConfiguration {
        var configuration = self
        configuration.clientID += "-cli-\(UUID().uuidString.prefix(8).lowercased())"
        return configuration
    }
}
