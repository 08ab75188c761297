package acp

// AppendChunkLine is appendChunkLine, for the external tests.
var AppendChunkLine = appendChunkLine

// ChunkUpdate is the update the Notify path sends for a chunk.
func ChunkUpdate(kind, text string) any {
	return contentChunk{SessionUpdate: kind, Content: contentBlock{Type: "text", Text: text}}
}

// Notification is the params of a session/update.
func Notification(sessionID string, update any) any {
	return notification{SessionID: sessionID, Update: update}
}
