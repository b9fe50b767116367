import CThreadName

import Glibc

/// A thread of its own for a loop that blocks in the kernel (`poll`, libmosquitto's loop), so
/// that no blocking call runs on Swift's cooperative pool; named, so that `top -H`, `perf` and
/// `/proc/PID/task/TID/comm` tell it apart.
///
/// A POSIX thread rather than Foundation's `Thread`: the agent imports FoundationEssentials
/// only, which has no `Thread`, and `Thread.name` does not reach the kernel on Linux anyway
/// (docs/raspberry-pi.md, "Threads and wake-ups", lists every thread of the agent).
public enum DedicatedThread {
    /// Starts a detached thread named `name` (its first 15 bytes) that runs `body` and ends.
    ///
    /// A thread that cannot be created (the process's thread limit, no memory for its stack)
    /// stops the program with the reason: nothing can run without it.
    public static func start(name: String, _ body: @escaping @Sendable () -> Void) {
        let context = Unmanaged.passRetained(Start(name: name, body: body)).toOpaque()
        var thread: pthread_t = 0
        let status = pthread_create(&thread, nil, runStart, context)
        guard status == 0 else {
            Unmanaged<Start>.fromOpaque(context).release()
            fatalError(
                "cannot start the thread \(name): pthread_create failed with error \(status) (\(errorText(status)))")
        }
        // Nobody joins it: its resources go back to the system when it ends.
        pthread_detach(thread)
    }

    private static func errorText(_ code: Int32) -> String {
        guard let text = strerror(code) else { return "unknown error" }
        return String(cString: text)
    }
}

/// What a new thread runs: its name and its body, handed over through pthread_create's argument.
private final class Start: Sendable {
    let name: String
    let body: @Sendable () -> Void

    init(name: String, body: @escaping @Sendable () -> Void) {
        self.name = name
        self.body = body
    }

    /// Runs on the new thread: names it, runs the body, and releases what `start` retained.
    static func run(_ context: UnsafeMutableRawPointer) {
        let start = Unmanaged<Start>.fromOpaque(context).takeRetainedValue()
        _ = myeline_name_current_thread(start.name)
        start.body()
    }
}

private func runStart(_ context: UnsafeMutableRawPointer?) -> UnsafeMutableRawPointer? {
    if let context { Start.run(context) }
    return nil
}
