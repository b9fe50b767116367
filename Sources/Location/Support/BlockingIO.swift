import Foundation

/// Runs a blocking call on a thread of its own, off Swift's cooperative pool, and awaits its result.
func runOffPool<T: Sendable>(_ name: String, _ body: @escaping @Sendable () -> T) async -> T {
    await withCheckedContinuation { continuation in
        let thread = Thread {
            continuation.resume(returning: body())
        }
        thread.name = name
        thread.start()
    }
}

/// Reads a whole file off the cooperative pool.
func readWholeFile(_ path: String) async throws(LocationError) -> [UInt8] {
    let result: Result<[UInt8], LocationError> = await runOffPool("myeline-read-file") {
        do {
            return .success(Array(try Data(contentsOf: URL(fileURLWithPath: path))))
        } catch {
            let reason = (error as NSError).localizedFailureReason ?? error.localizedDescription
            return .failure(LocationError(.fileUnreadable, "cannot read location file '\(path)': \(reason)"))
        }
    }
    return try result.get()
}
