import AuthEngine
import AuthWeb
#if canImport(Glibc)
import Glibc
#endif
import JSONValue

/// `gatehouse users import FILE` and `gatehouse users export FILE`: the JSON file `firebase
/// auth:export` writes (`{"users": [...]}`), so a Firebase project's accounts move over keeping
/// their uids (docs/migrating-from-firebase.md).
extension Users {
    /// The largest file `import` reads (about 1.5 million accounts of the export format).
    static let maxImportBytes = 512 << 20

    struct Import: Command {
        static let spec = Import.spec("import", "Import the accounts of a `firebase auth:export` JSON file, keeping their uids.",
                                      options: Target.options + [
                                          .flag("overwrite", help: "Replace accounts whose uid exists (default: report them and skip)."),
                                      ], arguments: [ArgumentSpec(name: "file", help: "The JSON file.")])
        let target: Target
        let file: String
        let overwrite: Bool

        init(_ p: ParsedArguments) throws {
            target = Target(p)
            file = try p.required("file")
            overwrite = p.flag("overwrite")
        }

        func run() throws {
            let bytes: [UInt8]
            do { bytes = try LocalFile.read(file) } catch { throw UsersError("cannot read \(file): \(error)") }
            guard bytes.count <= Users.maxImportBytes else { throw UsersError("\(file) is larger than \(Users.maxImportBytes >> 20) MB; split it") }
            let doc: JSON
            do { doc = try JSONParser(maxBytes: Users.maxImportBytes, maxDepth: 16).parse(bytes) } catch {
                throw UsersError("\(file) is not JSON: \(error)")
            }
            guard let users = doc["users"]?.arrayValue else { throw UsersError("\(file): expected {\"users\": [...]} as `firebase auth:export` writes") }
            let (_, project, admin) = try target.open()
            var imported = 0, failed = 0
            var start = 0
            while start < users.count {
                let batch = Array(users[start..<min(start + AccountAdmin.maxBatch, users.count)])
                var rows: [ImportedAccount] = [], positions: [Int] = []
                var failures: [AccountAdmin.ImportFailure] = []
                for (i, u) in batch.enumerated() {
                    do { rows.append(try AccountImportJSON.row(u)); positions.append(i) } catch let e as AuthError {
                        failures.append(.init(index: i, message: e.detail ?? e.message))
                    }
                }
                if !rows.isEmpty {
                    failures += try Users.wire { try admin.importAccounts(project: project, rows, allowOverwrite: overwrite) }
                        .map { .init(index: positions[$0.index], message: $0.message) }
                }
                for f in failures.sorted(by: { $0.index < $1.index }) {
                    let uid = batch[f.index]["localId"]?.stringValue ?? "?"
                    StandardError.write("user \(start + f.index + 1) (\(uid)): \(f.message)\n")
                }
                imported += batch.count - failures.count
                failed += failures.count
                start += batch.count
            }
            print("imported \(imported) account(s) into \(project)" + (failed > 0 ? "; \(failed) not imported (above)" : ""))
            if failed > 0 { throw UsersError("\(failed) account(s) not imported") }
        }
    }

    struct Export: Command {
        static let spec = Export.spec("export", "Write every account to a JSON file in the shape `firebase auth:export` writes.",
                                      options: Target.options, arguments: [ArgumentSpec(name: "file", help: "The JSON file (replaced).")])
        let target: Target
        let file: String

        init(_ p: ParsedArguments) throws {
            target = Target(p)
            file = try p.required("file")
        }

        /// Written to a temporary file beside it, then renamed: a reader never sees half a file.
        func run() throws {
            let (store, project, _) = try target.open()
            let temporary = file + ".partial"
            guard let f = fopen(temporary, "wb") else { throw UsersError("cannot write \(temporary): \(String(cString: strerror(errno)))") }
            var ok = true
            func put(_ text: String) { if ok { ok = text.withCString { fputs($0, f) } >= 0 } }
            var count = 0
            var after: String?
            do {
                put("{\"users\": [")
                while true {
                    let page = try store.listAccounts(project: project, after: after, limit: 1000)
                    for a in page {
                        put((count == 0 ? "\n" : ",\n") + AccountImportJSON.exported(a).serialized())
                        count += 1
                    }
                    guard page.count == 1000, let last = page.last else { break }
                    after = last.localID
                }
                put("\n]}\n")
            } catch {
                fclose(f)
                unlink(temporary)
                throw error
            }
            ok = fflush(f) == 0 && fsync(fileno(f)) == 0 && ok
            fclose(f)
            guard ok, rename(temporary, file) == 0 else {
                unlink(temporary)
                throw UsersError("cannot write \(file): \(String(cString: strerror(errno)))")
            }
            print("exported \(count) account(s) of \(project) to \(file)")
        }
    }
}
