@testable import FastCGI
import HTTP
import Testing

/// `readBody`: CONTENT_LENGTH against `maxBodyBytes`, and a body that arrives short.
@Suite("Request body limits")
struct BodyTests {
    /// Reads a body declared by `contentLength` from `available`, handed out `chunk` bytes at a time.
    func read(_ contentLength: String?, max: Int = 16, available: [UInt8] = [], chunk: Int = 1 << 20)
        -> (result: Result<[UInt8], FastCGIServer.BodyFailure>, reads: Int) {
        var params: [String: String] = [:]
        if let contentLength { params["CONTENT_LENGTH"] = contentLength }
        var offset = 0, reads = 0
        let result = FastCGIServer.readBody(params: CGIParams(params), max: max) { buf, n in
            reads += 1
            let count = min(Int(n), chunk, available.count - offset)
            for i in 0..<count { buf[i] = CChar(bitPattern: available[offset + i]) }
            offset += count
            return Int32(count)
        }
        return (result, reads)
    }

    @Test("no CONTENT_LENGTH, an empty one or 0: an empty body, nothing read")
    func noBody() {
        for length in [nil, "", "0", "000"] as [String?] {
            let r = read(length, available: [1, 2, 3])
            #expect((try? r.result.get()) == [], "\(String(describing: length))")
            #expect(r.reads == 0)
        }
    }

    @Test("a body of exactly maxBodyBytes is read; one byte more is refused before reading")
    func atAndPastLimit() {
        let bytes = [UInt8](1...17)
        #expect((try? read("16", available: bytes).result.get()) == Array(bytes.prefix(16)))
        let past = read("17", available: bytes)
        #expect(past.result == .failure(.tooLarge) && past.reads == 0)
    }

    @Test("a length too long for an Int is too large, not empty", arguments: ["9223372036854775808", "99999999999999999999999999"])
    func hugeLength(length: String) {
        let r = read(length)
        #expect(r.result == .failure(.tooLarge) && r.reads == 0)
    }

    @Test("a CONTENT_LENGTH that is not a decimal number is refused as too large, not read as no body", arguments: [
        "abc", "-5", "+5", " 5", "5 ", "1.5", "0x10", "5,5", "١٢",
    ])
    func unparsableLength(length: String) {
        let r = read(length, available: [1, 2, 3, 4, 5])
        #expect(r.result == .failure(.tooLarge) && r.reads == 0, "\(length)")
    }

    @Test("a body that arrives in pieces is joined")
    func pieces() {
        let bytes = [UInt8](1...10)
        let r = read("10", available: bytes, chunk: 3)
        #expect((try? r.result.get()) == bytes)
        #expect(r.reads == 4)
    }

    @Test("a body shorter than declared is a read failure, not a short body")
    func short() {
        #expect(read("10", available: [1, 2, 3]).result == .failure(.readFailed))
    }

    @Test("a refused body is read to its end and dropped (a reset connection would be nginx's 502), at most drainLimit bytes")
    func drainRefused() {
        var left = 100_000, reads = 0
        FastCGIServer.drain { _, n in
            reads += 1
            let count = min(Int(n), left)
            left -= count
            return Int32(count)
        }
        #expect(left == 0 && reads == 8, "100,000 bytes in 16 KiB reads, then the end")
        var total = 0
        FastCGIServer.drain { _, n in total += Int(n); return n }
        #expect(total == FastCGIServer.drainLimit, "an endless body stops at the limit")
    }
}
