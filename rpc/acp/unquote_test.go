package acp

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/armadra/ama-rpc/internal/alias"
)

// A huge text block is joined into the message without a copy of its
// own, and a huge image's data is the request's bytes as they arrived,
// with the same input as the usual decoding; anything unusual takes the
// usual path.
func TestHugeBlock(t *testing.T) {
	big := strings.Repeat(`ab\n\u00e9`, hugeTextBytes/8)
	b64 := strings.Repeat("QUJD", hugeTextBytes/4)
	for _, tc := range []struct {
		name   string
		block  string
		huge   bool
		shared bool // the image data is a sub-slice of the block
	}{
		{"text", `{"type":"text","text":"` + big + `"}`, true, false},
		{"text key in another case, last wins", `{"type":"text","text":"x","TEXT":"` + big + `"}`, true, false},
		{"not text", `{"type":"resource_link","uri":"file:///a","name":"` + big + `"}`, false, false},
		{"text not a string", `{"type":"text","text":1,"name":"` + big + `"}`, false, false},
		{"text with a bad member", `{"type":"text","uri":2,"text":"` + big + `"}`, false, false},
		{"small", `{"type":"text","text":"small"}`, false, false},
		{"image", `{"type":"image","mimeType":"image/png","data":"` + b64 + `"}`, true, true},
		{"image key in another case, last wins", `{"type":"image","data":"QQ==","mimeType":"image/png","DATA":"` + b64 + `"}`, true, true},
		{"image with escapes", `{"type":"image","mimeType":"image/png","data":"` + strings.Repeat(`QUJ\/`, hugeTextBytes/4) + `"}`, true, false},
		{"image not base64", `{"type":"image","mimeType":"image/png","data":"` + strings.Repeat("é", hugeTextBytes/2) + `"}`, true, false},
		{"image data in a text block", `{"type":"text","text":"x","data":"` + b64 + `"}`, false, false},
		{"image without a mime type", `{"type":"image","data":"` + b64 + `"}`, true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			raw := []byte(tc.block)
			_, _, huge := hugeBlock(raw)
			if huge != tc.huge {
				t.Fatalf("hugeBlock = %v, want %v", huge, tc.huge)
			}
			blocks := []json.RawMessage{json.RawMessage(`{"type":"text","text":"look"}`), raw}
			got, gerr := promptInput(blocks)
			var b contentBlock
			if err := json.Unmarshal(blocks[1], &b); err != nil {
				if gerr == nil || !strings.Contains(gerr.Error(), err.Error()) {
					t.Fatalf("error %v, want one with %v", gerr, err)
				}
				return
			}
			want, wantErr := promptInput([]json.RawMessage{blocks[0], json.RawMessage(fmt.Sprintf(`{"type":%q,"text":%q,"data":%q,"mimeType":%q,"uri":%q}`, b.Type, b.Text, b.Data, b.MimeType, b.URI))})
			if fmt.Sprint(gerr) != fmt.Sprint(wantErr) || got.Message != want.Message || len(got.Images) != len(want.Images) {
				t.Fatalf("message of %d bytes, %d images (err %v), want %d bytes, %d images (err %v)", len(got.Message), len(got.Images), gerr, len(want.Message), len(want.Images), wantErr)
			}
			for i, img := range got.Images {
				if img.Data != want.Images[i].Data || img.MimeType != want.Images[i].MimeType {
					t.Fatalf("image %d differs", i)
				}
				if _, shared := alias.Offset(img.Data, raw); shared != tc.shared {
					t.Fatalf("image %d data shares the line: %v, want %v", i, shared, tc.shared)
				}
			}
		})
	}
}
