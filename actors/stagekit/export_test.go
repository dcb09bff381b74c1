package stagekit

// ForcedCollections reports how many collections the dropped-permit check
// has run in this process.
func ForcedCollections() int64 { return forcedCollections.Load() }
