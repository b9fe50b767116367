extension Duration {
    /// The duration in seconds, as a floating-point number (attoseconds included).
    public var inSeconds: Double {
        let parts = components
        return Double(parts.seconds) + Double(parts.attoseconds) / 1e18
    }
}
