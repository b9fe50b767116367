import Dispatch
import Foundation
import FuzzSupport
import MyelineAgentKit
import MyelineConfiguration

/// The file the input is written to: in memory where possible, without fsync, so that the disk
/// does not set the pace.
private let path =
    (FileManager.default.fileExists(atPath: "/dev/shm") ? "/dev/shm" : NSTemporaryDirectory())
    + "/myeline-fuzz-\(getpid()).yaml"

/// The outcome of one load, handed from the task that loads to the fuzzer's thread.
private final class Outcome: @unchecked Sendable {
    var error: ConfigurationError?
    var loaded = false
}

/// libFuzzer entry point: one agent configuration file (YAML), read as `myeline-agent --config`
/// reads it, with no flags and no `MYELINE_*` variables; and the text, if it is UTF-8, given to
/// the YAML reader (`YAMLReader`) directly.
///
/// Besides not crashing or hanging: the file is either loaded or refused with an error that names
/// a key, variable or file and says what is wrong; the reader gives a tree or an error at a line
/// and a column of the text.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let bytes = FuzzSupport.bytes(data, count)
    if let text = String(validating: bytes, as: UTF8.self) {
        do {
            _ = try YAMLReader.parse(text)
        } catch {
            let lines = text.unicodeScalars.count { $0 == "\n" || $0 == "\r" } + 1
            precondition((1...lines).contains(error.line) && error.column >= 1 && !error.message.isEmpty)
        }
    }
    guard let file = fopen(path, "w"), fwrite(bytes, 1, count, file) == count, fclose(file) == 0 else {
        preconditionFailure("cannot write \(path)")
    }
    let outcome = Outcome()
    let done = DispatchSemaphore(value: 0)
    Task {
        do throws(ConfigurationError) {
            _ = try await ConfigurationLoader.load(
                flags: [:], file: path, environment: [:], defaultFile: "/nonexistent/agent.yaml")
            outcome.loaded = true
        } catch {
            outcome.error = error
        }
        done.signal()
    }
    done.wait()
    if let error = outcome.error {
        precondition(!error.description.isEmpty)
    } else {
        precondition(outcome.loaded)
    }
    return 0
}
