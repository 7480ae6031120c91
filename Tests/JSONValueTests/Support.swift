import JSONValue

/// The parser with the limits the service uses for request bodies, unless a test says otherwise.
let parser = JSONParser()

/// The value `bytes` parse to, or nil when they are refused.
func parsed(_ bytes: [UInt8], _ p: JSONParser = parser) -> JSON? { try? p.parse(bytes) }
func parsed(_ text: String, _ p: JSONParser = parser) -> JSON? { parsed(Array(text.utf8), p) }

/// The error `bytes` are refused with, or nil when they parse.
func refusal(_ bytes: [UInt8], _ p: JSONParser = parser) -> JSONError? {
    do { _ = try p.parse(bytes); return nil } catch { return error }
}
func refusal(_ text: String, _ p: JSONParser = parser) -> JSONError? { refusal(Array(text.utf8), p) }
