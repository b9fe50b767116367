import CMosquitto
import Glibc

/// Hands TLS files to libmosquitto after checking that each can be read, so that a wrong path is
/// reported by name instead of as libmosquitto's "invalid function arguments".
enum TLSFiles {
    /// Where Debian keeps the system's trusted certificate authorities.
    static let systemCertificateDirectory = "/etc/ssl/certs"

    static func configure(_ mosq: OpaquePointer, with tls: MQTTTLSConfiguration) throws(MQTTError) {
        guard (tls.certificateFile == nil) == (tls.keyFile == nil) else {
            throw MQTTError(
                .invalidConfiguration,
                "a client certificate needs both a certificate file and a key file: set both, or neither")
        }
        for (file, what) in [(tls.caFile, "CA"), (tls.certificateFile, "certificate"), (tls.keyFile, "key")] {
            guard let file else { continue }
            guard access(file, R_OK) == 0 else {
                let reason = String(cString: strerror(errno))
                throw MQTTError(.invalidConfiguration, "cannot read the TLS \(what) file \(file): \(reason)")
            }
        }
        let caPath = tls.caFile == nil ? systemCertificateDirectory : nil
        try MosquittoStatus(mosquitto_tls_set(mosq, tls.caFile, caPath, tls.certificateFile, tls.keyFile, nil)).check(
            "cannot use the TLS files (CA \(tls.caFile ?? caPath ?? "-"), certificate \(tls.certificateFile ?? "-"), key \(tls.keyFile ?? "-"))"
        )
        // Verify the broker's certificate and host name, always: SSL_VERIFY_PEER, no insecure mode.
        try MosquittoStatus(mosquitto_tls_opts_set(mosq, 1, nil, nil)).check("cannot require certificate verification")
        try MosquittoStatus(mosquitto_tls_insecure_set(mosq, false)).check("cannot require host name verification")
    }
}
