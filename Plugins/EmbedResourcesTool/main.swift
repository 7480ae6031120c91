import Foundation

/// `embed-resources OUTPUT ROOT FILE…`: writes a Swift file declaring `EmbeddedResources.files`,
/// each FILE (relative to ROOT, UTF-8 text) as a string literal under its relative path.
let args = CommandLine.arguments
guard args.count >= 3 else {
    FileHandle.standardError.write(Data("usage: embed-resources OUTPUT ROOT FILE...\n".utf8))
    exit(2)
}

/// A Swift string literal holding `bytes` exactly (escapes for quotes, backslashes, controls).
func literal(_ bytes: [UInt8]) -> String {
    var out = [UInt8]("\"".utf8)
    for b in bytes {
        switch b {
        case UInt8(ascii: "\""): out += Array("\\\"".utf8)
        case UInt8(ascii: "\\"): out += Array("\\\\".utf8)
        case 0x0A: out += Array("\\n".utf8)
        case 0x0D: out += Array("\\r".utf8)
        case 0x09: out += Array("\\t".utf8)
        case 0..<0x20, 0x7F: out += Array("\\u{\(String(b, radix: 16))}".utf8)
        default: out.append(b)
        }
    }
    out += Array("\"".utf8)
    return String(decoding: out, as: UTF8.self)
}

var text = "// Generated at build time by the EmbedResources plugin from Resources/: do not edit.\n\n"
text += "/// The target's resource files: path relative to `Resources/` → contents (UTF-8 text).\n"
text += "enum EmbeddedResources {\n    static let files: [String: StaticString] = [\n"
for file in args.dropFirst(3) {
    let data = try Data(contentsOf: URL(fileURLWithPath: args[2]).appendingPathComponent(file))
    guard String(data: data, encoding: .utf8) != nil else {
        FileHandle.standardError.write(Data("embed-resources: \(file) is not UTF-8 text\n".utf8))
        exit(1)
    }
    text += "        \(literal(Array(file.utf8))): \(literal([UInt8](data))),\n"
}
text += "    ]\n}\n"
let output = URL(fileURLWithPath: args[1])
if (try? Data(contentsOf: output)) != Data(text.utf8) {
    try Data(text.utf8).write(to: output, options: .atomic)
}
