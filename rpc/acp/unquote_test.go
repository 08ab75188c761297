package acp

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/sourcegraph/jsonrpc2"

	"github.com/armadra/ama-rpc/internal/alias"
	"github.com/armadra/ama-rpc/internal/i18n"
	"github.com/armadra/ama-rpc/internal/jsonlit"
	"github.com/armadra/ama-rpc/llm"
	"github.com/armadra/ama-rpc/session"
)

// copyingInput is promptInput as it was before blocks were decoded in
// place: every text, data and blob decoded into a string of its own by
// encoding/json, the parts joined by strings.Join.
func copyingInput(blocks []jsonlit.Raw) (session.PromptInput, error) {
	var in session.PromptInput
	var parts []string
	image := func(i int, data, mime string) error {
		if data == "" || mime == "" {
			return localized(errInvalidParams, i18n.ACPErrImageFields, i)
		}
		if err := llm.ValidateImage(data, mime); err != nil {
			return errorf(errInvalidParams, "prompt[%d]: %v", i, err)
		}
		in.Images = append(in.Images, llm.Image(data, mime))
		return nil
	}
	for i, raw := range blocks {
		var b contentBlock
		var res struct {
			Resource json.RawMessage `json:"resource"`
		}
		if err := json.Unmarshal(raw, &b); err != nil || json.Unmarshal(raw, &res) != nil {
			return in, errorf(errInvalidParams, "prompt[%d] is not a content block: %v", i, err)
		}
		switch b.Type {
		case "text":
			parts = append(parts, b.Text)
		case "image":
			if err := image(i, b.Data, b.MimeType); err != nil {
				return in, err
			}
		case "resource_link":
			if b.URI == "" {
				return in, localized(errInvalidParams, i18n.ACPErrResourceLinkURI, i)
			}
			parts = append(parts, "@"+b.URI)
		case "resource":
			var r struct {
				URI      string  `json:"uri"`
				Text     *string `json:"text"`
				Blob     *string `json:"blob"`
				MimeType string  `json:"mimeType"`
			}
			if len(res.Resource) == 0 || json.Unmarshal(res.Resource, &r) != nil || r.URI == "" {
				return in, localized(errInvalidParams, i18n.ACPErrResourceURI, i)
			}
			switch {
			case r.Text != nil:
				parts = append(parts, fmt.Sprintf("<resource uri=%q>\n%s\n</resource>", r.URI, *r.Text))
			case r.Blob != nil && strings.HasPrefix(r.MimeType, "image/"):
				if err := image(i, *r.Blob, r.MimeType); err != nil {
					return in, err
				}
			default:
				parts = append(parts, "@"+r.URI)
			}
		case "audio":
			return in, localized(errInvalidParams, i18n.ACPErrNoAudio, i)
		default:
			return in, localized(errInvalidParams, i18n.ACPErrUnknownBlock, i, b.Type)
		}
	}
	msg := strings.Join(parts, "\n")
	if strings.TrimSpace(msg) == "" && len(in.Images) == 0 {
		return in, localized(errInvalidParams, i18n.ACPErrEmptyPrompt)
	}
	in.Message = msg
	return in, nil
}

// sameInput fails unless promptInput decodes blocks as copyingInput does:
// the same message, images and error, byte for byte. It returns the input.
func sameInput(t *testing.T, blocks []jsonlit.Raw) session.PromptInput {
	t.Helper()
	got, gerr := promptInput(blocks, nil)
	want, werr := copyingInput(blocks)
	if fmt.Sprint(gerr) != fmt.Sprint(werr) || got.Message != want.Message || len(got.Images) != len(want.Images) {
		t.Fatalf("%.200q: message of %d bytes, %d images (err %v), want %d bytes, %d images (err %v)", blocks, len(got.Message), len(got.Images), gerr, len(want.Message), len(want.Images), werr)
	}
	for i, img := range got.Images {
		if img.Data != want.Images[i].Data || img.MimeType != want.Images[i].MimeType || img.Type != want.Images[i].Type {
			t.Fatalf("image %d differs", i)
		}
	}
	// The same blocks in the params of a huge request, whose literals are
	// lifted out of encoding/json's decode (decodeParams) and given back.
	params := []byte(`{"sessionId":"s","prompt":[`)
	for i, b := range blocks {
		if i > 0 {
			params = append(params, ',')
		}
		params = append(params, b...)
	}
	params = append(params, "]}"...)
	var p promptParams
	if err := decodeParams(&call{req: &jsonrpc2.Request{Method: "session/prompt"}, params: params}, &p); err != nil {
		t.Fatalf("params: %v", err)
	}
	if len(params) > 4*jsonlit.LiftMin && p.lifted == nil {
		t.Fatalf("%.200q: a huge request lifted nothing", blocks)
	}
	lifted, lerr := promptInput(p.Prompt, p.lifted)
	if fmt.Sprint(lerr) != fmt.Sprint(werr) || lifted.Message != want.Message || len(lifted.Images) != len(want.Images) {
		t.Fatalf("%.200q lifted: message of %d bytes, %d images (err %v), want %d bytes, %d images (err %v)", blocks, len(lifted.Message), len(lifted.Images), lerr, len(want.Message), len(want.Images), werr)
	}
	for i, img := range lifted.Images {
		if img.Data != want.Images[i].Data || img.MimeType != want.Images[i].MimeType {
			t.Fatalf("lifted image %d differs", i)
		}
	}
	return got
}

// Blocks decoded in place give what the copying decode gave, small or
// huge: texts with and without escapes, images, embedded text and image
// resources, invalid base64, invalid UTF-8, members of the wrong type; a
// huge image's data (of a block or an embedded resource) and a lone huge
// text without escapes are the request's bytes as they arrived.
func TestPromptBlocksInPlace(t *testing.T) {
	hugeToo := map[string]bool{"text": true, "escaped text": true, "images": true, "resource image": true, "resource text": true}
	for _, size := range []int{4, jsonlit.HugeBytes} {
		b64 := strings.Repeat("QUJD", size/4)
		esc := strings.Repeat(`ab\n\u00e9\"`, size/12+1)
		bad := strings.Repeat("\xff\xfe", size/2)
		for _, tc := range []struct {
			name   string
			blocks []string
			shared int // the images (or else the message) sharing the request at the huge size
		}{
			{"text", []string{`{"type":"text","text":"` + b64 + `"}`}, 1},
			{"text after text", []string{`{"type":"text","text":"look"}`, `{"type":"text","text":"` + b64 + `"}`}, 0},
			{"escaped text", []string{`{"type":"text","text":"look"}`, `{"type":"text","text":"` + esc + `"}`}, 0},
			{"lone escaped text", []string{`{"type":"text","text":"` + esc + `"}`}, 0},
			{"invalid UTF-8 text", []string{`{"type":"text","text":"` + bad + `"}`, `{"type":"text","text":"x"}`}, 0},
			{"text key in another case, last wins", []string{`{"type":"text","text":"x","TEXT":"` + esc + `"}`}, 0},
			{"text null", []string{`{"type":"text","text":"x","text":null}`}, 0},
			{"text not a string", []string{`{"type":"text","text":1,"name":"` + b64 + `"}`}, 0},
			{"two bad members", []string{`{"type":"text","uri":2,"text":3,"data":"` + b64 + `"}`}, 0},
			{"image", []string{`{"type":"text","text":"look"}`, `{"type":"image","mimeType":"image/png","data":"` + b64 + `"}`}, 1},
			{"images", []string{`{"type":"image","mimeType":"image/png","data":"` + b64 + `"}`, `{"type":"image","mimeType":"image/png","data":"` + b64 + `"}`}, 2},
			{"image key in another case, last wins", []string{`{"type":"image","data":"QQ==","mimeType":"image/png","DATA":"` + b64 + `"}`}, 1},
			{"image with escapes", []string{`{"type":"image","mimeType":"image/png","data":"` + strings.Repeat(`QUJ\/`, size/4) + `"}`}, 0},
			{"image not base64", []string{`{"type":"image","mimeType":"image/png","data":"` + esc + `"}`}, 0},
			{"image invalid UTF-8", []string{`{"type":"image","mimeType":"image/png","data":"` + bad + `"}`}, 0},
			{"image empty", []string{`{"type":"image","mimeType":"image/png","data":""}`}, 0},
			{"image without a mime type", []string{`{"type":"image","data":"` + b64 + `"}`}, 0},
			{"image of another type", []string{`{"type":"image","mimeType":"text/html","data":"` + b64 + `"}`}, 0},
			{"image data in a text block", []string{`{"type":"text","text":"x","data":"` + b64 + `"}`}, 0},
			{"resource image", []string{`{"type":"text","text":"look"}`, `{"type":"resource","resource":{"uri":"file:///a.png","mimeType":"image/png","blob":"` + b64 + `"}}`}, 1},
			{"resource image with escapes", []string{`{"type":"resource","resource":{"uri":"file:///a.png","mimeType":"image/png","blob":"` + strings.Repeat(`QUJ\/`, size/4) + `"}}`}, 0},
			{"resource image not base64", []string{`{"type":"resource","resource":{"uri":"file:///a.png","mimeType":"image/png","blob":"` + bad + `"}}`}, 0},
			{"resource blob not an image", []string{`{"type":"resource","resource":{"uri":"file:///a.bin","mimeType":"application/zip","blob":"` + b64 + `"}}`}, 0},
			{"resource text", []string{`{"type":"text","text":"look"}`, `{"type":"resource","resource":{"uri":"file:///a.go","text":"` + esc + `"}}`}, 0},
			{"lone resource text", []string{`{"type":"resource","resource":{"uri":"file:///a.go","text":"` + b64 + `"}}`}, 0},
			{"resource text null, blob", []string{`{"type":"resource","resource":{"uri":"file:///a.png","text":null,"mimeType":"image/png","blob":"` + b64 + `"}}`}, 1},
			{"resource blob null", []string{`{"type":"resource","resource":{"uri":"file:///a.png","blob":"` + b64 + `","mimeType":"image/png","blob":null}}`}, 0},
			{"resource without uri", []string{`{"type":"resource","resource":{"mimeType":"image/png","blob":"` + b64 + `"}}`}, 0},
			{"resource blob not a string", []string{`{"type":"resource","resource":{"uri":"file:///a.png","mimeType":"image/png","blob":5}}`}, 0},
			{"resource not an object", []string{`{"type":"resource","resource":"` + b64 + `"}`}, 0},
			{"resource null", []string{`{"type":"resource","resource":null}`}, 0},
			{"resource link", []string{`{"type":"resource_link","uri":"file:///a","name":"` + b64 + `"}`}, 0},
			{"audio", []string{`{"type":"audio","data":"` + b64 + `"}`}, 0},
			{"unknown", []string{`{"type":"video","data":"` + b64 + `"}`}, 0},
			{"empty", []string{`{"type":"text","text":" "}`}, 0},
			{"not an object", []string{`"` + b64 + `"`}, 0},
		} {
			if size >= jsonlit.HugeBytes && !hugeToo[tc.name] {
				continue // each huge block costs seconds under -race
			}
			t.Run(fmt.Sprintf("%s/%d", tc.name, size), func(t *testing.T) {
				blocks := make([]jsonlit.Raw, len(tc.blocks))
				for i, b := range tc.blocks {
					blocks[i] = jsonlit.Raw(b)
				}
				got := sameInput(t, blocks)
				shared := 0
				for _, img := range got.Images {
					for _, b := range blocks {
						if _, ok := alias.Offset(img.Data, b); ok {
							shared++
						}
					}
				}
				if len(got.Images) == 0 {
					if _, ok := alias.Offset(got.Message, blocks[0]); ok {
						shared++
					}
				}
				if want := map[bool]int{true: tc.shared}[size >= jsonlit.HugeBytes]; shared != want {
					t.Fatalf("%d strings share the request, want %d", shared, want)
				}
			})
		}
	}
}

// FuzzPromptBlocks: any blocks decode in place as they do by copying.
func FuzzPromptBlocks(f *testing.F) {
	for _, s := range []string{`{"type":"text","text":"a\nb"}`, `{"type":"image","mimeType":"image/png","data":"QUJD"}`,
		`{"type":"resource","resource":{"uri":"file:///a","text":"x\u00e9"}}`, `{"type":"resource","resource":{"uri":"u","mimeType":"image/png","blob":"QUJD"}}`,
		`{"type":"resource_link","uri":"u"}`, `{"type":"text","text":1,"uri":2}`, `{"Type":"text","TEXT":"x","text":null}`} {
		f.Add([]byte(s), []byte(`{"type":"text","text":"look"}`))
	}
	f.Fuzz(func(t *testing.T, a, b []byte) {
		if !json.Valid(a) || !json.Valid(b) {
			return // the stream rejects a line that is not JSON
		}
		sameInput(t, []jsonlit.Raw{a, b})
		sameInput(t, []jsonlit.Raw{a})
	})
}
