import MyelineAgentKit

await AgentCommand.start()
