package troupehttp

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/troupe-go/troupe"
)

// BaseURL makes the leaf send every request to base, a replica of the API
// the requests are written against: the leaf of each endpoint of a
// balancer whose endpoints are base URLs (see the package doc, and
// Example_balancer).
//
//	balance.Pipelines(sys, func(base string) supervisor.Build[*http.Request, *http.Response] {
//		return func(h troupe.Host) (troupe.Service[*http.Request, *http.Response], error) {
//			return stages.Stack[*http.Request, *http.Response]().Limit(32).
//				Build(h, troupehttp.Send(tr, troupehttp.BaseURL(base)))
//		}
//	})
//
// The request the leaf sends is a copy of the one it is given, with a URL
// of its own, as httputil.ProxyRequest.SetURL routes a proxy's request:
// the scheme and host are base's (its user too, when it has one), the path
// is base's path joined with the request's ("http://10.0.0.7:8080/v1" and
// "http://api/items/7" give "http://10.0.0.7:8080/v1/items/7"), and base's
// query comes before the request's. The Host header it sends is base's
// host, unless the request's Host names another host than its URL's (a
// proxy that keeps its client's Host header, as ReverseProxy's Director
// does and a Rewrite does with r.Out.Host = r.In.Host): that Host is kept.
// Everything else is the request's: its method, header, body and GetBody
// (so the RoundTripper can replay the body as it would the request's own),
// and its context as the leaf always sets it.
//
// The caller's request is never modified: a retry stage outside a
// balancer copies it again (CloneRequest) for each attempt, and each
// attempt goes to the base URL of the endpoint it is sent to. Every request
// goes to base, whatever host its URL names: the leaf serves one API. An
// http.Client over a Transport of such a stack follows redirects through
// the stack too, so give it a CheckRedirect that refuses redirects to other
// hosts if the API may send some.
//
// The TLS server name is the URL's host, base's, as for any request: for
// https replicas whose certificate names the API rather than each replica,
// set the RoundTripper's TLSClientConfig.ServerName.
//
// base must be an absolute URL, with a scheme and a host; one that is not
// makes the leaf a configuration error (Build refuses it with an error
// matching troupe.ErrBadConfig). Its fragment is ignored.
func BaseURL(base string) ClientOption {
	u, err := url.Parse(base)
	var why string
	switch {
	case err != nil:
		why = "not a URL"
	case u.Scheme == "" || u.Host == "":
		why = "need an absolute URL, with a scheme and a host"
	}
	return func(c *clientConfig) {
		if why != "" {
			if c.bad == nil {
				c.bad = &troupe.ConfigError{Stage: "troupehttp", Option: "BaseURL", Value: base, Why: why, Err: err}
			}
			return
		}
		c.base = u
	}
}

// rebase points out, a copy of the caller's request that the leaf owns, at
// base: it gets a URL of its own, and its Host when the request's named
// its URL's host (see BaseURL).
func rebase(out *http.Request, base *url.URL) {
	u := new(url.URL)
	if out.URL != nil {
		*u = *out.URL
	}
	host := u.Host
	u.Scheme, u.Host, u.Opaque = base.Scheme, base.Host, ""
	if base.User != nil {
		u.User = base.User
	}
	u.Path, u.RawPath = joinURLPath(base, u)
	if base.RawQuery != "" {
		if u.RawQuery == "" {
			u.RawQuery = base.RawQuery
		} else {
			u.RawQuery = base.RawQuery + "&" + u.RawQuery
		}
	}
	out.URL = u
	if out.Host == host || out.Host == strings.TrimSuffix(host, ":") {
		out.Host = "" // the Host header is the URL's: base's
	}
}

// joinURLPath joins base's path and the request's, as httputil's
// ReverseProxy does: one slash between them, escaped paths kept.
func joinURLPath(base, req *url.URL) (path, rawpath string) {
	if base.RawPath == "" && req.RawPath == "" {
		return singleJoiningSlash(base.Path, req.Path), ""
	}
	apath, bpath := base.EscapedPath(), req.EscapedPath()
	aslash, bslash := strings.HasSuffix(apath, "/"), strings.HasPrefix(bpath, "/")
	switch {
	case aslash && bslash:
		return base.Path + req.Path[1:], apath + bpath[1:]
	case !aslash && !bslash:
		return base.Path + "/" + req.Path, apath + "/" + bpath
	}
	return base.Path + req.Path, apath + bpath
}

func singleJoiningSlash(a, b string) string {
	aslash, bslash := strings.HasSuffix(a, "/"), strings.HasPrefix(b, "/")
	switch {
	case aslash && bslash:
		return a + b[1:]
	case !aslash && !bslash:
		return a + "/" + b
	}
	return a + b
}
