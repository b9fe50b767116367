import CMosquitto

/// The one `@unchecked Sendable` wrapper around a `struct mosquitto *`.
///
/// Why it is safe to share: the handle is put in threaded mode (`mosquitto_threaded_set`), in which
/// libmosquitto guards its queues with its own mutexes, so `mosquitto_publish_v5`,
/// `mosquitto_subscribe_v5`, `mosquitto_unsubscribe_v5` and `mosquitto_disconnect_v5` may be called
/// from any thread. Everything else (connect, loop, options) is called only on the client's own
/// network thread, and `destroy()` only after that thread has ended.
struct MosquittoHandle: @unchecked Sendable {
    let pointer: OpaquePointer

    /// Creates a handle in threaded mode whose callbacks receive `context` as their user pointer.
    ///
    /// The caller keeps `context` alive until `destroy()`.
    init(clientID: String, cleanSession: Bool, context: UnsafeMutableRawPointer) throws(MQTTError) {
        _ = libraryInitialisation
        guard let pointer = mosquitto_new(clientID, cleanSession, context) else {
            throw MQTTError(.library, "cannot create an MQTT client for client id \"\(clientID)\": out of memory")
        }
        self.pointer = pointer
        mosquitto_threaded_set(pointer, true)
    }

    /// Frees the handle; the network thread must have ended.
    func destroy() {
        mosquitto_destroy(pointer)
    }
}

/// `mosquitto_lib_init` runs once per process, the first time a handle is made.
private let libraryInitialisation: Void = {
    mosquitto_lib_init()
}()
