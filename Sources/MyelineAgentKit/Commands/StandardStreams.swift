import Glibc

/// The process's standard output and error, written with write(2) at once: what Foundation's
/// `FileHandle.standardOutput` did, without Foundation (the agent imports FoundationEssentials
/// only: docs/raspberry-pi.md, "Footprint").
enum StandardStream: Int32 {
    case output = 1
    case error = 2

    /// Writes all of `text`; what a closed or full stream refuses is dropped (there is nowhere
    /// left to report it).
    func write(_ text: String) {
        var bytes = Array(text.utf8)[...]
        while !bytes.isEmpty {
            let written = bytes.withUnsafeBytes { systemWrite(rawValue, $0.baseAddress, $0.count) }
            if written < 0 && errno == EINTR { continue }
            guard written > 0 else { return }
            bytes = bytes.dropFirst(written)
        }
    }
}

/// write(2), named apart from ``StandardStream/write(_:)``.
private func systemWrite(_ descriptor: Int32, _ buffer: UnsafeRawPointer?, _ count: Int) -> Int {
    write(descriptor, buffer, count)
}
