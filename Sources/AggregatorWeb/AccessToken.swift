import Foundation

/// The optional access token every request must carry when one is set (`web.token-file`): in an
/// `Authorization: Bearer …` header, the page's cookie, or once in the address's `token=…`
/// (the page then keeps it in its cookie, which a browser sends with its scripts and event stream).
public struct AccessToken: Sendable, Hashable {
    /// The name of the cookie that carries the token.
    public static let cookieName = "myeline-token"

    let value: [UInt8]

    /// The characters a token may hold: those a cookie and a query carry as they are.
    public static let allowedCharacters = Set(
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~+/=")

    /// A token from a file's contents: its first line, without surrounding white space; nil when
    /// that is empty or holds a character outside ``allowedCharacters`` (the caller names the file).
    public init?(fileContents: String) {
        let line = fileContents.split(whereSeparator: \.isNewline).first.map(String.init) ?? ""
        let token = line.trimmingCharacters(in: .whitespaces)
        guard !token.isEmpty, token.allSatisfy(Self.allowedCharacters.contains) else { return nil }
        value = Array(token.utf8)
    }

    /// Whether a request with these credentials may pass: the `Authorization` header, the `Cookie`
    /// header and the query's token, any of which may be absent.
    public func admits(authorization: String?, cookie: String?, queryToken: String?) -> Bool {
        var candidates: [String] = []
        if let authorization, authorization.hasPrefix("Bearer ") {
            candidates.append(String(authorization.dropFirst("Bearer ".count)))
        }
        if let cookie {
            for part in cookie.split(separator: ";") {
                let pair = part.trimmingCharacters(in: .whitespaces)
                if pair.hasPrefix(Self.cookieName + "=") {
                    candidates.append(String(pair.dropFirst(Self.cookieName.count + 1)))
                }
            }
        }
        if let queryToken { candidates.append(queryToken) }
        return candidates.contains { matches(Array($0.utf8)) }
    }

    /// Compares without stopping at the first difference, so that timing does not tell how much of
    /// a guess was right.
    private func matches(_ candidate: [UInt8]) -> Bool {
        var difference = UInt8(truncatingIfNeeded: candidate.count ^ value.count)
        for index in value.indices {
            difference |= value[index] ^ (index < candidate.count ? candidate[index] : 0)
        }
        return difference == 0
    }

    /// The `Set-Cookie` value that keeps the token for the page's later requests.
    public var cookie: String {
        "\(Self.cookieName)=\(String(decoding: value, as: UTF8.self)); Path=/; HttpOnly; SameSite=Strict"
    }
}
