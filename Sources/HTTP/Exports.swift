@_exported import JSONValue
