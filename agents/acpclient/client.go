package acpclient

import (
	"context"
	"encoding/json"
	"errors"
	"io"

	"github.com/sourcegraph/jsonrpc2"

	"github.com/armadra/ama-rpc/internal/jsonline"
)

// Handler serves what the agent sends.
type Handler interface {
	// Update receives the "update" object of a session/update
	// notification.
	Update(update json.RawMessage)
	// RequestPermission answers session/request_permission (its params);
	// the result is sent back as is.
	RequestPermission(ctx context.Context, params json.RawMessage) (any, error)
}

// Client is one connection to an ACP agent.
type Client struct {
	conn *jsonrpc2.Conn
}

// New connects to an agent: in is the agent's stdout, out its stdin.
func New(in io.Reader, out io.WriteCloser, h Handler) *Client {
	c := &Client{}
	c.conn = jsonrpc2.NewConn(context.Background(), jsonline.NewStream(in, out, jsonline.MaxLine), jsonrpc2.HandlerWithError(
		func(ctx context.Context, _ *jsonrpc2.Conn, req *jsonrpc2.Request) (any, error) {
			var params json.RawMessage
			if req.Params != nil {
				params = *req.Params
			}
			switch req.Method {
			case "session/update":
				var p struct {
					Update json.RawMessage `json:"update"`
				}
				_ = json.Unmarshal(params, &p)
				h.Update(p.Update)
				return nil, nil
			case "session/request_permission":
				return h.RequestPermission(ctx, params)
			}
			return nil, &jsonrpc2.Error{Code: jsonrpc2.CodeMethodNotFound, Message: "method not supported: " + req.Method}
		}))
	return c
}

// Call sends a request and decodes its result into result (nil: ignored).
func (c *Client) Call(ctx context.Context, method string, params, result any) error {
	return c.conn.Call(ctx, method, params, result)
}

// Notify sends a notification.
func (c *Client) Notify(ctx context.Context, method string, params any) error {
	return c.conn.Notify(ctx, method, params)
}

// Close closes the connection.
func (c *Client) Close() error { return c.conn.Close() }

// AuthRequired reports the agent's "authentication required" error
// (JSON-RPC -32000).
func AuthRequired(err error) bool {
	var e *jsonrpc2.Error
	return errors.As(err, &e) && e.Code == -32000
}
