package troupehttp

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net/http"
	"strings"

	"github.com/troupe-go/troupe"
)

// markPermanent marks err, the error of sending req (refused: an
// http.Client returned a response with it), with troupe.Permanent when no
// retry can cure it:
//
//   - a redirect the http.Client refused (its CheckRedirect's error, as
//     after 10 redirects): the only error http.Client.Do returns with a
//     response, and the next attempt is redirected the same way;
//   - a certificate the client does not trust (for the host's name, from
//     an unknown authority, expired), or a server that does not speak
//     TLS where TLS was asked for;
//   - a request no client can send: no URL or no host, a scheme other
//     than http and https, an invalid method, an invalid header name or
//     value (net/http checks these before it sends anything).
//
// A context's error is never marked: whether the call's context ended is
// ErrCallEnded's business.
func markPermanent(req *http.Request, refused bool, err error) error {
	switch {
	case errors.Is(err, troupe.ErrPermanent),
		errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return err
	case refused, untrusted(err), unsendable(req):
		return troupe.Permanent(err)
	}
	return err
}

// untrusted reports whether err is a TLS failure that the same server
// gives every attempt: its certificate, or no TLS at all.
func untrusted(err error) bool {
	var (
		verify    *tls.CertificateVerificationError
		authority x509.UnknownAuthorityError
		host      x509.HostnameError
		invalid   x509.CertificateInvalidError
		record    tls.RecordHeaderError
	)
	return errors.As(err, &verify) || errors.As(err, &authority) || errors.As(err, &host) ||
		errors.As(err, &invalid) || errors.As(err, &record)
}

// unsendable reports whether req is a request net/http refuses to send,
// whatever the server: the checks its Transport makes before writing.
func unsendable(req *http.Request) bool {
	if req == nil || req.URL == nil || req.URL.Host == "" {
		return true
	}
	if s := strings.ToLower(req.URL.Scheme); s != "http" && s != "https" {
		return true
	}
	if req.Method != "" && !isToken(req.Method) {
		return true
	}
	for k, vs := range req.Header {
		if !isToken(k) {
			return true
		}
		for _, v := range vs {
			if !validHeaderValue(v) {
				return true
			}
		}
	}
	return false
}

// isToken reports whether s is an RFC 9110 token: a header name or a
// method.
func isToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x80 || !tokenChar[c] {
			return false
		}
	}
	return true
}

// validHeaderValue reports whether v may be sent as a header value: no
// control character but horizontal tab (RFC 9110's field-value, as
// net/http checks it).
func validHeaderValue(v string) bool {
	for i := 0; i < len(v); i++ {
		if c := v[i]; c < ' ' && c != '\t' || c == 0x7f {
			return false
		}
	}
	return true
}

// tokenChar holds the characters of a token (tchar in RFC 9110).
var tokenChar = func() (t [128]bool) {
	for c := '0'; c <= '9'; c++ {
		t[c] = true
	}
	for c := 'a'; c <= 'z'; c++ {
		t[c], t[c-'a'+'A'] = true, true
	}
	for _, c := range "!#$%&'*+-.^_`|~" {
		t[c] = true
	}
	return t
}()
