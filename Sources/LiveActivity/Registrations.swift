/// Values registered under tokens, such as the continuations of open streams; the token removes
/// its value again when its consumer goes away.
struct Registrations<Value: Sendable>: Sendable {
    private var values: [Int: Value] = [:]
    private var nextToken = 0

    /// Every registered value.
    var all: Dictionary<Int, Value>.Values { values.values }

    /// Registers a value and returns its token.
    mutating func add(_ value: Value) -> Int {
        nextToken += 1
        values[nextToken] = value
        return nextToken
    }

    /// Forgets the value registered under `token`, if it is still registered.
    mutating func remove(_ token: Int) {
        values[token] = nil
    }

    /// Forgets every value and returns them.
    mutating func removeAll() -> [Value] {
        defer { values = [:] }
        return Array(values.values)
    }
}
