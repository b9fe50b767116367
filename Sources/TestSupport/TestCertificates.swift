/// A throwaway certificate authority with a server certificate for `localhost` and 127.0.0.1 and a
/// client certificate, made by `openssl` in a test's temporary directory. Valid for two days.
public struct TestCertificates: Sendable {
    /// The CA certificate (PEM) that signed the others.
    public let caFile: String
    /// The server certificate (PEM), for `localhost` and 127.0.0.1.
    public let serverCertificateFile: String
    /// The server certificate's private key (PEM).
    public let serverKeyFile: String
    /// A client certificate (PEM) with common name `clientName`.
    public let clientCertificateFile: String
    /// The client certificate's private key (PEM).
    public let clientKeyFile: String

    /// Makes a CA and its certificates in `directory`, with file names starting with `prefix`.
    ///
    /// - Throws: `TestSupportError` when openssl is missing or fails.
    public static func make(in directory: String, prefix: String = "test", clientName: String = "client") async throws
        -> TestCertificates
    {
        let openssl = try executablePath("openssl", package: "openssl")
        let base = "\(directory)/\(prefix)"
        let key = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
        try await runProgram(
            openssl,
            ["req", "-x509"] + key + [
                "-keyout", "\(base)-ca.key", "-out", "\(base)-ca.crt", "-days", "2", "-subj",
                "/CN=Myeline test CA \(prefix)",
                "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign",
            ])
        for (name, subject, extensions) in [
            ("server", "/CN=localhost", ["-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1"]),
            ("client", "/CN=\(clientName)", []),
        ] {
            try await runProgram(
                openssl,
                ["req", "-new"] + key + [
                    "-keyout", "\(base)-\(name).key", "-out", "\(base)-\(name).csr", "-subj", subject,
                ]
                    + extensions)
            try await runProgram(
                openssl,
                [
                    "x509", "-req", "-in", "\(base)-\(name).csr", "-CA", "\(base)-ca.crt", "-CAkey", "\(base)-ca.key",
                    "-CAcreateserial", "-days", "2", "-copy_extensions", "copyall", "-out", "\(base)-\(name).crt",
                ])
        }
        return TestCertificates(
            caFile: "\(base)-ca.crt", serverCertificateFile: "\(base)-server.crt", serverKeyFile: "\(base)-server.key",
            clientCertificateFile: "\(base)-client.crt", clientKeyFile: "\(base)-client.key")
    }
}
