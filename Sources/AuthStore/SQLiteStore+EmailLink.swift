import AuthEngine

extension SQLiteStore: EmailLinkStore {}
