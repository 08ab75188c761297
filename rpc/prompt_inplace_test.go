package rpc

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/armadra/ama-rpc/internal/alias"
	"github.com/armadra/ama-rpc/internal/jsonlit"
	"github.com/armadra/ama-rpc/llm"
)

// copyingPrompt decodes a prompt command as it was decoded before its
// message and images were decoded in place: into strings of their own.
func copyingPrompt(line []byte) (msg *string, images []*llm.ImageContent, err error) {
	c, perr := parseCommand(line)
	if perr != "" {
		return nil, nil, fmt.Errorf("%s", perr)
	}
	var p struct {
		Message *string `json:"message"`
		Images  []struct {
			Type     string `json:"type"`
			Data     string `json:"data"`
			MimeType string `json:"mimeType"`
		} `json:"images,omitempty"`
		StreamingBehavior string          `json:"streamingBehavior,omitempty"`
		Interrupt         json.RawMessage `json:"interrupt,omitempty"`
	}
	if err := params(c, &p); err != nil {
		return nil, nil, err
	}
	for i, im := range p.Images {
		if im.Type != "" && im.Type != "image" {
			return nil, nil, fmt.Errorf("%w: images[%d] has type %q; images must be {type:\"image\",data,mimeType}", errInvalidParams, i, im.Type)
		}
		if im.Data == "" || im.MimeType == "" {
			return nil, nil, fmt.Errorf("%w: images[%d] needs data and mimeType", errInvalidParams, i)
		}
		if err := llm.ValidateImage(im.Data, im.MimeType); err != nil {
			return nil, nil, fmt.Errorf("%w: images[%d]: %v", errInvalidParams, i, err)
		}
		images = append(images, llm.Image(im.Data, im.MimeType))
	}
	return p.Message, images, nil
}

// inPlacePrompt decodes it as handlePrompt does.
func inPlacePrompt(line []byte) (msg *string, images []*llm.ImageContent, err error) {
	c, perr := parseCommand(line)
	if perr != "" {
		return nil, nil, fmt.Errorf("%s", perr)
	}
	var p promptParams
	if err := params(c, &p); err != nil {
		return nil, nil, err
	}
	if images, err = toImages(p.Images); err != nil {
		return nil, nil, err
	}
	if p.Message != nil {
		s := p.Message.Text()
		msg = &s
	}
	return msg, images, nil
}

// samePrompt fails unless line decodes in place as it did by copying; it
// returns how many of the message and images' data share the line.
func samePrompt(t *testing.T, line []byte, exactError bool) int {
	t.Helper()
	wm, wi, werr := copyingPrompt(line)
	gm, gi, gerr := inPlacePrompt(line)
	switch {
	case (werr == nil) != (gerr == nil), exactError && fmt.Sprint(werr) != fmt.Sprint(gerr):
		t.Fatalf("%.200q: error %v, want %v", line, gerr, werr)
	case werr != nil:
		return 0
	case (wm == nil) != (gm == nil) || (wm != nil && *wm != *gm) || len(wi) != len(gi):
		t.Fatalf("%.200q: message or images differ", line)
	}
	shared := 0
	if gm == nil {
		gm = new(string)
	}
	if _, ok := alias.Offset(*gm, line); ok {
		shared++
	}
	for i, img := range gi {
		if img.Data != wi[i].Data || img.MimeType != wi[i].MimeType || img.Type != wi[i].Type {
			t.Fatalf("image %d differs", i)
		}
		if _, ok := alias.Offset(img.Data, line); ok {
			shared++
		}
	}
	return shared
}

// A prompt decoded in place is the prompt decoded by copying, small or
// huge: text with and without escapes, images, invalid base64, invalid
// UTF-8, members of the wrong type, keys in another case; a huge message
// or image data without escapes is the line's bytes as it arrived.
func TestPromptInPlace(t *testing.T) {
	hugeToo := map[string]bool{"text": true, "text and images": true, "image with escapes": true}
	for _, size := range []int{4, jsonlit.HugeBytes} {
		b64 := strings.Repeat("QUJD", size/4)
		esc := strings.Repeat(`ab\n\u00e9\"`, size/12+1)
		bad := strings.Repeat("\xff\xfe", size/2)
		img := func(data string) string { return `{"type":"image","mimeType":"image/png","data":"` + data + `"}` }
		for _, tc := range []struct {
			name, params string
			shared       int // at the huge size
		}{
			{"text", `"message":"` + b64 + `"`, 1},
			{"escaped text", `"message":"` + esc + `"`, 0},
			{"invalid UTF-8 text", `"message":"` + bad + `"`, 0},
			{"image", `"message":"look","images":[` + img(b64) + `]`, 1},
			{"text and images", `"message":"` + b64 + `","images":[` + img(b64) + `,` + img(b64) + `]`, 3},
			{"image with escapes", `"message":"look","images":[` + img(strings.Repeat(`QUJ\/`, size/4)) + `]`, 0},
			{"image not base64", `"message":"look","images":[` + img(esc) + `]`, 0},
			{"image invalid UTF-8", `"message":"look","images":[` + img(bad) + `]`, 0},
			{"image empty", `"message":"look","images":[` + img("") + `]`, 0},
			{"image without a mime type", `"message":"look","images":[{"data":"` + b64 + `"}]`, 0},
			{"image of another type", `"message":"look","images":[{"type":"file","mimeType":"image/png","data":"` + b64 + `"}]`, 0},
			{"image data null", `"message":"look","images":[{"type":"image","mimeType":"image/png","data":"` + b64 + `","data":null}]`, 1},
			{"image data a number", `"message":"look","images":[{"type":"image","mimeType":"image/png","data":5}]`, 0},
			{"image not an object", `"message":"look","images":["` + b64 + `"]`, 0},
			{"message null", `"message":null,"images":[` + img(b64) + `]`, 1},
			{"message missing", `"images":[` + img(b64) + `]`, 1},
			{"message a number", `"message":5,"images":[` + img(b64) + `]`, 0},
			{"message an object", `"message":{"text":"` + b64 + `"}`, 0},
			{"message key in another case", `"message":"x","Message":"` + b64 + `"`, 0},
			{"message twice", `"message":"x","message":"` + b64 + `"`, 1},
		} {
			if size >= jsonlit.HugeBytes && !hugeToo[tc.name] {
				continue // each huge line costs seconds under -race
			}
			t.Run(fmt.Sprintf("%s/%d", tc.name, size), func(t *testing.T) {
				line := []byte(`{"id":"1","type":"prompt",` + tc.params + `}`)
				want := map[bool]int{true: tc.shared}[size >= jsonlit.HugeBytes]
				if got := samePrompt(t, line, true); got != want {
					t.Fatalf("%d strings share the line, want %d", got, want)
				}
			})
		}
	}
}

// FuzzPromptParams: any prompt command decodes in place as it does by
// copying. With two members of the wrong type the error may name the
// message or an image's data first (a Lit's type error cannot wait to be
// the first in the line, jsonlit).
func FuzzPromptParams(f *testing.F) {
	for _, s := range []string{`"message":"a\nb"`, `"message":"x","images":[{"type":"image","mimeType":"image/png","data":"QUJD"}]`,
		`"message":1`, `"images":[{"data":"QQ=="}]`, `"message":"x","Images":[],"streamingBehavior":"steer"`, `"message":null`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, params string) {
		line := []byte(`{"id":"1","type":"prompt",` + params + `}`)
		if json.Valid(line) {
			samePrompt(t, line, strings.Count(params, ":") < 3)
		}
	})
}
