import Aggregator

/// `myeline-aggregator`: everything is in the `Aggregator` library, so that tests reach it.
@main
enum AggregatorMain {
    static func main() async {
        await AggregatorCommand.main()
    }
}
