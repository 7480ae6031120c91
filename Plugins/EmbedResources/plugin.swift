import Foundation
import PackagePlugin

/// Build-tool plugin: the files under a target's `Resources/` folder become one generated Swift
/// file (`EmbeddedResources.files`: relative path → contents as a static string), so the binary
/// carries its templates, locales and region data without SwiftPM's resource bundle (whose
/// generated accessor imports Foundation) and reads them without file I/O.
@main
struct EmbedResources: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: Target) throws -> [Command] {
        let root = target.directoryURL.appending(path: "Resources")
        var files: [String] = []
        if let walker = FileManager.default.enumerator(at: root, includingPropertiesForKeys: [.isRegularFileKey]) {
            for case let url as URL in walker where (try? url.resourceValues(forKeys: [.isRegularFileKey]).isRegularFile) == true {
                files.append(String(url.standardizedFileURL.path.dropFirst(root.standardizedFileURL.path.count + 1)))
            }
        }
        files.sort()
        let output = context.pluginWorkDirectoryURL.appending(path: "EmbeddedResources.swift")
        return [.buildCommand(
            displayName: "Embedding \(files.count) resource files of \(target.name)",
            executable: try context.tool(named: "embed-resources").url,
            arguments: [output.path, root.path] + files,
            inputFiles: files.map { root.appending(path: $0) },
            outputFiles: [output]
        )]
    }
}
