import Foundation

/// What a child process printed and how it ended.
public struct ChildProcessResult: Sendable {
    /// The exit status.
    public var status: Int32
    /// Standard output, as UTF-8.
    public var output: String
    /// Standard error, as UTF-8.
    public var errorOutput: String
}

/// Runs `executable` with `arguments` and waits for it. Output goes through temporary files, not pipes: no
/// pipe-buffer deadlock, and no `FileHandle` read (Foundation's `readDataToEndOfFile` traps when a signal
/// interrupts it). `environment` is added to this process's environment (replacing variables of the same names); a
/// variable given as an empty string is left out.
public func runChildProcess(
    _ executable: URL, _ arguments: [String], environment: [String: String] = [:]
) throws -> ChildProcessResult {
    let process = Process()
    process.executableURL = executable
    process.arguments = arguments
    if !environment.isEmpty {
        var merged = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        for (name, value) in environment where value.isEmpty { merged[name] = nil }
        process.environment = merged
    }
    let base = FileManager.default.temporaryDirectory.appendingPathComponent("routekit-child-\(UUID().uuidString)")
    let outURL = base.appendingPathExtension("out")
    let errURL = base.appendingPathExtension("err")
    _ = FileManager.default.createFile(atPath: outURL.path, contents: nil)
    _ = FileManager.default.createFile(atPath: errURL.path, contents: nil)
    defer {
        try? FileManager.default.removeItem(at: outURL)
        try? FileManager.default.removeItem(at: errURL)
    }
    let out = try FileHandle(forWritingTo: outURL)
    let err = try FileHandle(forWritingTo: errURL)
    process.standardOutput = out
    process.standardError = err
    try process.run()
    process.waitUntilExit()
    try out.close()
    try err.close()
    return ChildProcessResult(
        status: process.terminationStatus, output: try String(contentsOf: outURL, encoding: .utf8),
        errorOutput: try String(contentsOf: errURL, encoding: .utf8))
}
