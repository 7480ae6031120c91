/// What Twilio's reported statuses mean as a `DeliveryState` (nil: a status this does not know,
/// ignored).
public enum TwilioStatus {
    /// `MessageStatus` of SMS and WhatsApp messages.
    public static func state(messageStatus: String) -> DeliveryState? {
        switch messageStatus {
        case "accepted", "queued", "scheduled": .queued
        case "sending", "sent": .sent
        case "delivered", "read": .delivered
        case "undelivered": .undelivered
        case "failed", "canceled": .failed
        default: nil
        }
    }

    /// `CallStatus` of calls: a call answered and finished said the code.
    public static func state(callStatus: String) -> DeliveryState? {
        switch callStatus {
        case "queued", "initiated": .queued
        case "ringing", "in-progress": .sent
        case "completed": .delivered
        case "busy", "no-answer", "canceled": .undelivered
        case "failed": .failed
        default: nil
        }
    }
}
