package tools

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/armadra/ama-rpc/llm"
)

// Limits of the read tool.
const (
	// ReadDefaultLimit is how many lines read shows when no limit is given.
	ReadDefaultLimit = 2000
	// ReadMaxLineChars is where read cuts a long line.
	ReadMaxLineChars = 2000
	// ReadMaxImageBytes is the largest image read attaches.
	ReadMaxImageBytes = 5 << 20
	// ReadMaxScanBytes bounds how much of a text file read looks at to
	// find the page and count the lines.
	ReadMaxScanBytes = 256 << 20
)

// ReadTool shows text files with line numbers and images as attachments.
type ReadTool struct{}

// ReadDetails is the Details of a text read.
type ReadDetails struct {
	Path       string `json:"path"`
	StartLine  int    `json:"startLine"`
	EndLine    int    `json:"endLine"`
	TotalLines int    `json:"totalLines"`
	// NextOffset is the offset of the next page, 0 when the end was shown.
	NextOffset int `json:"nextOffset,omitempty"`
}

func (ReadTool) Decl() llm.ToolDecl { return decl(NameRead, readSchema) }
func (ReadTool) Permission() string { return PermRead }

type readArgs struct {
	Path   string `json:"path"`
	Offset intArg `json:"offset"`
	Limit  intArg `json:"limit"`
}

func (ReadTool) Execute(ctx context.Context, call *Call) (*Result, error) {
	var a readArgs
	if r := decodeArgs(NameRead, call, &a); r != nil {
		return r, nil
	}
	env := call.env()
	r := call.resolution(NameRead)
	abs, shown := r.Real, env.Rel(r.Path)
	if r.Err != nil {
		return errorf("Cannot read %s: %v", shown, r.Err), nil
	}
	f, st, _, err := openReal(r.RealRoot, abs, openRead)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return errorf("File not found: %s", shown), nil
	case errors.Is(err, errIsDir):
		return errorf("%s is a directory; use ls to list it", shown), nil
	case err != nil:
		return errorf("Cannot read %s: %v", shown, describeOpenError(err)), nil
	}
	defer f.Close()

	head := make([]byte, 8192)
	n, err := io.ReadFull(f, head)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return errorf("Cannot read %s: %v", shown, unwrapPathError(err)), nil
	}
	head = head[:n]
	if mime := imageMIME(head); mime != "" {
		return readImage(env, f, abs, shown, mime, st.Size())
	}
	if ext := strings.ToLower(filepath.Ext(abs)); imageExts[ext] {
		return errorf("%s has an image extension but its content is not a PNG, JPEG, GIF or WebP image", shown), nil
	}
	if bytes.IndexByte(head, 0) >= 0 {
		return errorf("%s is a binary file (%s); read shows only text files and images", shown, formatBytes(st.Size())), nil
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return errorf("Cannot read %s: %v", shown, err), nil
	}
	res, err := readText(ctx, f, shown, int(a.Offset), int(a.Limit), call.Limit())
	if err != nil {
		return nil, err
	}
	if !res.IsError {
		env.Reads.Mark(abs)
	}
	return res, nil
}

var imageExts = map[string]bool{".png": true, ".jpg": true, ".jpeg": true, ".gif": true, ".webp": true}

// imageMIME recognises the supported image formats by their magic bytes.
func imageMIME(head []byte) string {
	switch {
	case bytes.HasPrefix(head, []byte("\x89PNG\r\n\x1a\n")):
		return "image/png"
	case bytes.HasPrefix(head, []byte("\xff\xd8\xff")):
		return "image/jpeg"
	case bytes.HasPrefix(head, []byte("GIF87a")), bytes.HasPrefix(head, []byte("GIF89a")):
		return "image/gif"
	case len(head) >= 12 && string(head[:4]) == "RIFF" && string(head[8:12]) == "WEBP":
		return "image/webp"
	}
	return ""
}

func readImage(env *Env, f *os.File, abs, shown, mime string, size int64) (*Result, error) {
	if size > ReadMaxImageBytes {
		return errorf("%s is too large to attach (%s, limit %s)", shown, formatBytes(size), formatBytes(ReadMaxImageBytes)), nil
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return errorf("Cannot read %s: %v", shown, err), nil
	}
	data, err := io.ReadAll(io.LimitReader(f, ReadMaxImageBytes+1))
	if err != nil {
		return errorf("Cannot read %s: %v", shown, unwrapPathError(err)), nil
	}
	env.Reads.Mark(abs)
	return &Result{
		Content: []llm.Content{
			llm.Text(fmt.Sprintf("Image %s (%s, %s) is attached.", shown, mime, formatBytes(int64(len(data))))),
			llm.Image(base64.StdEncoding.EncodeToString(data), mime),
		},
		Details: map[string]any{"path": shown, "mimeType": mime, "bytes": len(data)},
	}, nil
}

// readText formats lines [offset, offset+limit) cat -n style, staying under
// chars characters (the call's Limit), and counts the remaining lines.
func readText(ctx context.Context, r io.Reader, shown string, offset, limit, chars int) (*Result, error) {
	return readTextScan(ctx, r, shown, offset, limit, chars, ReadMaxScanBytes)
}

// readTextScan is readText looking at the first maxScan bytes. Lines
// before the page are skipped without being copied, lines after it (or
// after the character budget) are only counted, with bytes.Count over
// large reads.
func readTextScan(ctx context.Context, r io.Reader, shown string, offset, limit, chars int, maxScan int64) (*Result, error) {
	if offset < 1 {
		offset = 1
	}
	if limit <= 0 {
		limit = ReadDefaultLimit
	}
	lr := &io.LimitedReader{R: r, N: maxScan}
	br := bufio.NewReaderSize(lr, 64*1024)
	var (
		out       strings.Builder
		lineNo    int
		lastShown int
		longCut   bool
		budgetHit bool
		scanCut   bool
	)
	for {
		if lineNo%4096 == 0 && ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if lr.N <= 0 && br.Buffered() == 0 {
			scanCut = true // the rest of the file is not looked at
			break
		}
		if lineNo+1 >= offset+limit || budgetHit {
			// No later line is shown: count them.
			n, err := countRestLines(ctx, br, lr)
			if err != nil {
				if ctx.Err() != nil {
					return nil, ctx.Err()
				}
				return errorf("Cannot read %s: %v", shown, err), nil
			}
			lineNo += n
			scanCut = lr.N <= 0
			break
		}
		if lineNo+1 < offset {
			ok, err := skipLine(br)
			if err != nil {
				return errorf("Cannot read %s: %v", shown, err), nil
			}
			if !ok {
				break
			}
			lineNo++
			continue
		}
		text, ok, err := readLine(br, ReadMaxLineChars)
		if err != nil {
			return errorf("Cannot read %s: %v", shown, err), nil
		}
		if !ok {
			break
		}
		lineNo++
		if text.cut {
			longCut = true
		}
		line := fmt.Sprintf("%6d\t%s\n", lineNo, text.s)
		if out.Len()+len(line) > chars-300 && lastShown >= offset {
			budgetHit = true
			continue
		}
		out.WriteString(line)
		lastShown = lineNo
	}
	total := lineNo
	switch {
	case total == 0:
		return &Result{Content: []llm.Content{llm.Text(fmt.Sprintf("%s is empty.", shown))},
			Details: ReadDetails{Path: shown}}, nil
	case offset > total && scanCut:
		return errorf("Offset %d is beyond the part of %s that read looks at (the first %s, %s)", offset, shown, formatBytes(ReadMaxScanBytes), plural(total, "line")), nil
	case offset > total:
		return errorf("Offset %d is past the end of %s (%s)", offset, shown, plural(total, "line")), nil
	}
	body := strings.TrimSuffix(out.String(), "\n")
	d := ReadDetails{Path: shown, StartLine: offset, EndLine: lastShown, TotalLines: total}
	var notes []string
	if longCut {
		notes = append(notes, fmt.Sprintf("Lines longer than %d characters were cut.", ReadMaxLineChars))
	}
	if scanCut {
		notes = append(notes, fmt.Sprintf("Only the first %s of the file were looked at; line counts stop there.", formatBytes(ReadMaxScanBytes)))
	}
	if lastShown < total {
		d.NextOffset = lastShown + 1
		notes = append(notes, fmt.Sprintf("Showing lines %d-%d of %d; continue with offset=%d.", offset, lastShown, total, lastShown+1))
	}
	if len(notes) > 0 {
		body += "\n\n[" + strings.Join(notes, " ") + "]"
	}
	return &Result{Content: []llm.Content{llm.Text(body)}, Details: d}, nil
}

// countRestLines counts the lines of the rest of br, which reads from lr: the
// "\n"s, plus a last line without one.
func countRestLines(ctx context.Context, br *bufio.Reader, lr io.Reader) (int, error) {
	b, _ := br.Peek(br.Buffered())
	n := bytes.Count(b, newline)
	last := byte('\n')
	if len(b) > 0 {
		last = b[len(b)-1]
	}
	if _, err := br.Discard(len(b)); err != nil {
		return 0, err
	}
	buf := make([]byte, 512<<10)
	for {
		if err := ctx.Err(); err != nil {
			return 0, err
		}
		k, err := lr.Read(buf)
		if k > 0 {
			n += bytes.Count(buf[:k], newline)
			last = buf[k-1]
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return 0, err
		}
	}
	if last != '\n' {
		n++
	}
	return n, nil
}

// skipLine reads past one line; ok is false at EOF.
func skipLine(br *bufio.Reader) (ok bool, err error) {
	for {
		chunk, err := br.ReadSlice('\n')
		if len(chunk) > 0 {
			ok = true
		}
		switch {
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case err != nil && !errors.Is(err, io.EOF):
			return false, err
		}
		return ok, nil
	}
}

type lineText struct {
	s   string
	cut bool
}

// readLine reads one line without its terminator ("\n" or "\r\n"), keeping
// at most max runes (cut marks that more followed). ok is false at EOF.
func readLine(br *bufio.Reader, max int) (lineText, bool, error) {
	var (
		buf  []byte
		cut  bool
		read bool
	)
	for {
		chunk, err := br.ReadSlice('\n')
		if len(chunk) > 0 {
			read = true
		}
		if !cut {
			buf = append(buf, chunk...)
			if len(buf) > 4*max+8 {
				buf = buf[:4*max+8]
				cut = true
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return lineText{}, false, err
		}
		if err != nil && !read {
			return lineText{}, false, nil
		}
		break
	}
	if !cut {
		buf = bytes.TrimSuffix(buf, []byte("\n"))
		buf = bytes.TrimSuffix(buf, []byte("\r"))
	}
	s := strings.ToValidUTF8(string(buf), "\uFFFD")
	if utf8.RuneCountInString(s) > max {
		s = headRunesExact(s, max)
		cut = true
	}
	if cut {
		s += " …"
	}
	return lineText{s: s, cut: cut}, true, nil
}

// headRunesExact returns the first n runes of s.
func headRunesExact(s string, n int) string {
	i := 0
	for k := 0; k < n && i < len(s); k++ {
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
	}
	return s[:i]
}

// unwrapPathError drops the "open /abs/path:" prefix of *fs.PathError.
func unwrapPathError(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
