import AuthEngine

extension SQLiteStore: AppVerificationStore {}
