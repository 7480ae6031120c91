import AuthEngine
#if canImport(Glibc)
import Glibc
#endif

/// One `--name value` option (or `--name` flag) of a command; `-x` when it has a short name.
struct OptionSpec: Sendable {
    let name: String
    var short: Character? = nil
    var isFlag = false
    let help: String

    static func flag(_ name: String, help: String) -> OptionSpec { OptionSpec(name: name, isFlag: true, help: help) }
}

/// One positional argument of a command.
struct ArgumentSpec: Sendable {
    let name: String
    let help: String
    var required = true
}

/// A command of the `gatehouse` tool: its options and arguments and what it runs, or a group of
/// subcommands (with the one taken when none is named).
struct CommandSpec: Sendable {
    let name: String
    let abstract: String
    var options: [OptionSpec] = []
    var arguments: [ArgumentSpec] = []
    var subcommands: [CommandSpec] = []
    var defaultSubcommand: String? = nil
    var run: (@Sendable (ParsedArguments) throws -> Void)? = nil
}

/// The options and arguments given to one command, by name.
struct ParsedArguments {
    var values: [String: String] = [:]
    var flags: Set<String> = []

    func string(_ name: String) -> String? { values[name] }
    func flag(_ name: String) -> Bool { flags.contains(name) }

    func int(_ name: String) throws -> Int? {
        guard let v = values[name] else { return nil }
        guard let n = Int(v) else { throw UsageError("The value '\(v)' is invalid for '--\(name) <\(name)>'") }
        return n
    }

    func required(_ name: String) throws -> String {
        guard let v = values[name] else { throw UsageError("Missing expected argument '--\(name) <\(name)>'") }
        return v
    }

    func requiredInt(_ name: String) throws -> Int {
        guard let n = try int(name) else { throw UsageError("Missing expected argument '--\(name) <\(name)>'") }
        return n
    }
}

/// A mistake in the command line, or an option value the command refuses: printed with the
/// command's usage; exit status 64 (EX_USAGE).
struct UsageError: Error, CustomStringConvertible {
    let description: String
    init(_ message: String) { description = message }
}

/// Ends the command with this exit status and no further message.
struct ExitStatus: Error {
    let code: Int32
    init(_ code: Int32) { self.code = code }
}

/// Parses `arguments` against `root` and runs the command they name; never returns. Help
/// (`-h`, `--help`, `help [command]`), `--version`, and errors: a `UsageError` or a command-line
/// mistake prints `Error: …` and the usage and exits 64, any other error `Error: …` and exits 1.
func runCommandLine(_ root: CommandSpec, version: String, arguments: [String]) -> Never {
    var path = [root]
    var rest = arguments[...]
    do {
        while let command = path.last, !command.subcommands.isEmpty {
            if let first = rest.first {
                if first == "help" {
                    var target = path
                    for name in rest.dropFirst() {
                        guard let sub = target.last!.subcommands.first(where: { $0.name == name }) else { break }
                        target.append(sub)
                    }
                    printHelp(target)
                }
                if first == "--help" || first == "-h" { printHelp(path) }
                if first == "--version", path.count == 1 { print(version); exit(0) }
                if let sub = command.subcommands.first(where: { $0.name == first }) {
                    path.append(sub)
                    rest = rest.dropFirst()
                    continue
                }
            }
            guard let name = command.defaultSubcommand, let sub = command.subcommands.first(where: { $0.name == name }) else {
                if let first = rest.first { throw UsageError("Unexpected argument '\(first)'") }
                printHelp(path)
            }
            path.append(sub)
        }
        let parsed = try parse(rest, for: path)
        try path.last!.run?(parsed)
        exit(0)
    } catch let e as UsageError {
        let names = path.map(\.name).joined(separator: " ")
        StandardError.write("Error: \(e.description)\nUsage: \(usage(path))\n  See '\(names) --help' for more information.\n")
        exit(64)
    } catch let e as ExitStatus {
        exit(e.code)
    } catch {
        StandardError.write("Error: \(error)\n")
        exit(1)
    }
}

private func parse(_ args: ArraySlice<String>, for path: [CommandSpec]) throws -> ParsedArguments {
    let command = path.last!
    var out = ParsedArguments()
    var rest = args
    var positionals: [String] = []
    var onlyPositionals = false
    while let arg = rest.popFirst() {
        if onlyPositionals || !arg.hasPrefix("-") || arg == "-" {
            positionals.append(arg)
            continue
        }
        if arg == "--" { onlyPositionals = true; continue }
        if arg == "--help" || arg == "-h" { printHelp(path) }
        var inline: String? = nil
        let spec: OptionSpec?
        if arg.hasPrefix("--") {
            var name = String(arg.dropFirst(2))
            if let eq = name.firstIndex(of: "=") {
                inline = String(name[name.index(after: eq)...])
                name = String(name[..<eq])
            }
            spec = command.options.first { $0.name == name }
        } else {
            spec = arg.count == 2 ? command.options.first { $0.short == arg.last } : nil
        }
        guard let spec else { throw UsageError("Unknown option '\(arg)'") }
        if spec.isFlag {
            guard inline == nil else { throw UsageError("The flag '--\(spec.name)' does not take a value") }
            out.flags.insert(spec.name)
            continue
        }
        guard let value = inline ?? rest.popFirst() else { throw UsageError("Missing value for '--\(spec.name) <\(spec.name)>'") }
        out.values[spec.name] = value
    }
    for (i, spec) in command.arguments.enumerated() {
        if i < positionals.count { out.values[spec.name] = positionals[i] }
        else if spec.required { throw UsageError("Missing expected argument '<\(spec.name)>'") }
    }
    if positionals.count > command.arguments.count {
        throw UsageError("Unexpected argument '\(positionals[command.arguments.count])'")
    }
    return out
}

private func usage(_ path: [CommandSpec]) -> String {
    let command = path.last!
    var parts = [path.map(\.name).joined(separator: " ")]
    if !command.subcommands.isEmpty { parts.append("<subcommand>") }
    for o in command.options { parts.append(o.isFlag ? "[--\(o.name)]" : "[--\(o.name) <\(o.name)>]") }
    for a in command.arguments { parts.append(a.required ? "<\(a.name)>" : "[<\(a.name)>]") }
    return parts.joined(separator: " ")
}

private func printHelp(_ path: [CommandSpec]) -> Never {
    let command = path.last!
    var lines = ["OVERVIEW: \(command.abstract)", "", "USAGE: \(usage(path))", ""]
    func entry(_ left: String, _ help: String) -> String {
        left.count < 24 ? "  " + left + String(repeating: " ", count: 24 - left.count) + help : "  \(left)\n" + String(repeating: " ", count: 26) + help
    }
    if !command.arguments.isEmpty {
        lines.append("ARGUMENTS:")
        for a in command.arguments { lines.append(entry("<\(a.name)>", a.help)) }
        lines.append("")
    }
    lines.append("OPTIONS:")
    for o in command.options {
        let short = o.short.map { "-\($0), " } ?? ""
        lines.append(entry(short + (o.isFlag ? "--\(o.name)" : "--\(o.name) <\(o.name)>"), o.help))
    }
    if path.count == 1 { lines.append(entry("--version", "Show the version.")) }
    lines.append(entry("-h, --help", "Show help information."))
    if !command.subcommands.isEmpty {
        lines += ["", "SUBCOMMANDS:"]
        for s in command.subcommands {
            lines.append(entry(s.name + (s.name == command.defaultSubcommand ? " (default)" : ""), s.abstract))
        }
        lines += ["", "  See '\(path.map(\.name).joined(separator: " ")) help <subcommand>' for detailed help."]
    }
    print(lines.joined(separator: "\n"))
    exit(0)
}
