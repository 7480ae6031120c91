import AuthEngine

extension SQLiteStore: PhoneStore {}
