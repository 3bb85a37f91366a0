package awstest

import (
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"time"
)

// serialFront stands in front of moto and lets one DynamoDB request through
// at a time. DynamoDB evaluates a write's condition and applies the write as
// one step, which is what the lease table relies on; moto checks the
// condition and then updates the item in separate steps without a lock, so
// two conditional writes arriving together can both pass on a loaded
// machine. Serialising DynamoDB's requests gives the tests the store's real
// guarantee. Other services pass through concurrently, so long polls still
// overlap.
type serialFront struct {
	srv *http.Server
	mu  sync.Mutex
}

// startSerialFront listens on a free loopback port and forwards to backend.
func startSerialFront(backend string) (*serialFront, string, error) {
	u, err := url.Parse(backend)
	if err != nil {
		return nil, "", err
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, "", err
	}
	rp := httputil.NewSingleHostReverseProxy(u)
	rp.Transport = &http.Transport{
		Proxy:               nil,
		MaxIdleConns:        256,
		MaxIdleConnsPerHost: 256,
		IdleConnTimeout:     30 * time.Second,
	}
	rp.ErrorLog = log.New(io.Discard, "", 0) // a client giving up on a call is no news here
	f := &serialFront{}
	f.srv = &http.Server{
		ReadHeaderTimeout: 10 * time.Second,
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if strings.HasPrefix(r.Header.Get("X-Amz-Target"), "DynamoDB_") {
				f.mu.Lock()
				defer f.mu.Unlock()
			}
			rp.ServeHTTP(w, r)
		}),
	}
	go func() { _ = f.srv.Serve(l) }()
	return f, "http://" + l.Addr().String(), nil
}

func (f *serialFront) close() { _ = f.srv.Close() }
