import CLibFuzzer
import Foundation

extension FuzzSupport {
    /// A fuzz target's entry point: libFuzzer's `LLVMFuzzerTestOneInput`, given one input.
    public typealias Target = @convention(c) (_ data: UnsafePointer<UInt8>?, _ count: Int) -> CInt

    /// Runs libFuzzer on `target` with this process's arguments (libFuzzer's flags and corpus
    /// directories), then exits with libFuzzer's status: the whole of a fuzz target's `main.swift`.
    public static func runLibFuzzer(_ target: Target) -> Never {
        var argc = CommandLine.argc
        var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
        exit(LLVMFuzzerRunDriver(&argc, &argv, target))
    }

    /// The input as bytes; libFuzzer may pass no pointer for an empty input.
    public static func bytes(_ data: UnsafePointer<UInt8>?, _ count: Int) -> [UInt8] {
        Array(UnsafeBufferPointer(start: data, count: count))
    }
}
