package golden

import "github.com/armadra/ama-rpc/internal/transcript"

// The transcript vocabulary lives in internal/transcript (shared with the
// replay kit); these names keep the tests' spelling.
type (
	Value      = transcript.Value
	Object     = transcript.Object
	Normalizer = transcript.Normalizer
	ShapeRules = transcript.ShapeRules
	Keep       = transcript.Keep
)

var (
	Parse             = transcript.Parse
	Encode            = transcript.Encode
	MergeDeltas       = transcript.MergeDeltas
	MergeTranscript   = transcript.MergeTranscript
	CompareShape      = transcript.CompareShape
	DefaultShapeRules = transcript.DefaultShapeRules
)

// trim shortens s for a message.
func trim(s string) string {
	if len(s) > 80 {
		return s[:77] + "..."
	}
	return s
}
