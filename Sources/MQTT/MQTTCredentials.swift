import Glibc

/// A username and password for the broker.
///
/// The password is never printed: `description` masks it. It is read from a file or an
/// environment variable (see `PasswordSource`), never from the command line.
public struct MQTTCredentials: Hashable, Sendable, CustomStringConvertible, CustomReflectable {
    /// The username.
    public var username: String
    /// The password, or `nil` for a username alone.
    public var password: String?

    /// Creates credentials.
    public init(username: String, password: String? = nil) {
        self.username = username
        self.password = password
    }

    public var description: String {
        password == nil ? "username \(username)" : "username \(username), password ********"
    }

    /// A mirror that masks the password, so that `dump` and debuggers do not show it either.
    public var customMirror: Mirror {
        Mirror(self, children: ["username": username, "password": password == nil ? "nil" : "********"])
    }
}

/// Where a password comes from.
public enum PasswordSource: Hashable, Sendable {
    /// The first line of a file (a trailing newline is removed); keep it mode 0600.
    case file(String)
    /// An environment variable's value.
    case environment(String)

    /// Reads the password.
    ///
    /// - Parameter environment: the process environment, injectable for tests.
    /// - Throws: `MQTTError` `.invalidConfiguration` naming the file or variable and the fix.
    public func load(environment: [String: String]) throws(MQTTError) -> String {
        switch self {
        case .environment(let name):
            guard let value = environment[name], !value.isEmpty else {
                throw MQTTError(
                    .invalidConfiguration,
                    "the password variable \(name) is not set or empty: export it, or use a password file")
            }
            return value
        case .file(let path):
            let text = try Self.read(path)
            let password = String(text.prefix { !$0.isNewline })
            guard !password.isEmpty else {
                throw MQTTError(
                    .invalidConfiguration, "the password file \(path) is empty: write the password on its first line")
            }
            return password
        }
    }

    private static let maximumFileSize = 64 * 1024

    private static func read(_ path: String) throws(MQTTError) -> String {
        guard let file = fopen(path, "r") else {
            let reason = String(cString: strerror(errno))
            throw MQTTError(
                .invalidConfiguration,
                "cannot read the password file \(path): \(reason); create it readable by this user (mode 0600)")
        }
        defer { fclose(file) }
        // fopen opens a directory for reading; only the first read fails (EISDIR).
        var status = stat()
        if fstat(fileno(file), &status) == 0, status.st_mode & S_IFMT != S_IFREG {
            let what = status.st_mode & S_IFMT == S_IFDIR ? "a directory" : "not a regular file"
            throw MQTTError(
                .invalidConfiguration,
                "the password file \(path) is \(what): point mqtt.password-file at a file holding the password")
        }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = fread(&buffer, 1, buffer.count, file)
            if count == 0 { break }
            bytes.append(contentsOf: buffer[..<count])
            guard bytes.count <= maximumFileSize else {
                throw MQTTError(
                    .invalidConfiguration,
                    "the password file \(path) is larger than \(maximumFileSize) bytes: it should hold one password")
            }
        }
        if ferror(file) != 0 {
            let reason = String(cString: strerror(errno))
            throw MQTTError(.invalidConfiguration, "cannot read the password file \(path): \(reason)")
        }
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw MQTTError(.invalidConfiguration, "the password file \(path) is not UTF-8 text")
        }
        return text
    }
}
