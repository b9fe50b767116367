import Foundation

/// Runs `body` with a new private directory, removed with everything in it afterwards.
///
/// The path is short, so that unix socket paths inside it stay under the 107-byte limit.
public func withTemporaryDirectory<R>(
    isolation: isolated (any Actor)? = #isolation, _ body: (String) async throws -> R
) async throws -> R {
    var template = Array("/tmp/myeline-XXXXXX".utf8CString)
    guard let made = mkdtemp(&template) else {
        throw TestSupportError("cannot make a temporary directory: \(String(cString: strerror(errno)))")
    }
    let path = String(cString: made)
    defer { try? FileManager.default.removeItem(atPath: path) }
    return try await body(path)
}

/// Finds a program on `PATH`, or in the system directories where Debian puts daemons.
///
/// - Throws: `TestSupportError` naming the program and the Debian package that has it.
public func executablePath(_ name: String, package: String) throws -> String {
    let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
    let directories = path.split(separator: ":").map(String.init) + ["/usr/sbin", "/sbin", "/usr/bin", "/bin"]
    for directory in directories where FileManager.default.isExecutableFile(atPath: "\(directory)/\(name)") {
        return "\(directory)/\(name)"
    }
    throw TestSupportError("\(name) is not installed: apt-get install \(package) (scripts/test does this)")
}

/// Runs a program to completion and returns its output.
///
/// - Throws: `TestSupportError` with the output when it exits with a non-zero status.
@discardableResult
public func runProgram(_ executable: String, _ arguments: [String], timeout: Duration = .seconds(60)) async throws
    -> String
{
    let name = (executable as NSString).lastPathComponent
    let process = try TestProcess(name: name, executable: executable, arguments: arguments)
    let status = try await withDeadline(timeout, what: "\(name) to finish", process: process) {
        try await process.waitForExit()
    }
    guard status == 0 else {
        throw TestSupportError("\(name) \(arguments.joined(separator: " ")) exited with \(status):\n\(process.output)")
    }
    return process.output
}

/// A free TCP port on 127.0.0.1, found by binding port 0; another process may take it before the
/// caller binds it, so callers retry on "address in use".
public func freeLoopbackPort() throws -> Int {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { throw TestSupportError("socket() failed: \(String(cString: strerror(errno)))") }
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = 0
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
            bind(fd, pointer, length) == 0 && getsockname(fd, pointer, &length) == 0
        }
    }
    guard bound else { throw TestSupportError("cannot bind a loopback port: \(String(cString: strerror(errno)))") }
    return Int(UInt16(bigEndian: address.sin_port))
}

/// The path of an executable built by this package (for example `MQTTProbe`), found beside the
/// running test binary in the build directory.
///
/// - Throws: `TestSupportError` when it has not been built.
public func builtProductPath(_ name: String) throws -> String {
    var directory = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent()
    // On Linux the tests run from `.build/debug/NAME.xctest`; on macOS from inside that bundle.
    for _ in 0..<4 {
        let candidate = directory.appendingPathComponent(name).path
        if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        directory.deleteLastPathComponent()
    }
    throw TestSupportError("\(name) is not built next to \(CommandLine.arguments[0]): run the tests with swift test")
}
