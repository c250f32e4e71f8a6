#!/usr/bin/env python3
"""A Pyroscope stand-in for the fleet tests: its push API and its /ingest.

The push API, push.v1.PusherService/Push, as the Connect protocol makes a
unary call over HTTP/1.1: POST /push.v1.PusherService/Push with Content-Type
application/proto, Connect-Protocol-Version 1 and a non-empty body (a
push.v1.PushRequest, kept as it came: the tests decode it with the code
generated from the vendored proto/pyroscope), answered with 200 and an empty
application/proto message; anything else gets a Connect error (400 and a JSON
body {"code": "invalid_argument", ...}) and is not kept. Each request taken is
kept as DIR/NNNNNN.push.

An OTLP/HTTP receiver of profiles: POST /v1development/profiles with
Content-Type application/x-protobuf and a non-empty body (an
ExportProfilesServiceRequest, kept as it came, as DIR/NNNNNN.otlp), answered
with 200 and an empty response message; anything else gets 400.

/ingest implements the contract as grafana/pyroscope's source reads it
(pkg/ingester/pyroscope/ingest_handler.go, pkg/og/convert/pprof/profile.go,
api/model/labelset/validate.go): POST /ingest with `name` (service name of
[A-Za-z0-9_.-/], labels {k=v,...} with names of [A-Za-z0-9_.], not
__name__), integer `from` <= `until`, a positive integer `sampleRate` when
given; and a multipart/form-data body whose part "profile" is a gzipped
pprof (format=pprof would mean a bare body, so a multipart body with it is
refused). Anything else gets 400 and is not kept.

Each accepted profile is kept as DIR/NNNNNN.pb.gz with its query in
DIR/NNNNNN.query, in the order received (NNNNNN counts both APIs'
profiles). Usage: ingest_server.py DIR PORTFILE
[PORT] (the port it listens on, on 127.0.0.1, is written to PORTFILE when
ready; PORT 0 or none: a free one). SIGTERM stops it between requests, so a
profile is either kept and answered or neither: a test that takes the server
down sees no profile kept without its answer (which would be sent again).
"""
import email.parser
import email.policy
import gzip
import http.server
import json
import os
import re
import signal
import sys
import threading
import urllib.parse

SERVICE = re.compile(r'^[A-Za-z0-9_.\-/]+$')
LABEL = re.compile(r'^[A-Za-z0-9_.]+$')


def check_name(name):
    m = re.fullmatch(r'([^{]*)\{([^}]*)\}', name)
    if not m:
        return 'name has no {labels}'
    service, labels = m.group(1).strip(), m.group(2)
    if not SERVICE.match(service):
        return 'bad service name %r' % service
    for pair in filter(None, labels.split(',')):
        if '=' not in pair:
            return 'bad label %r' % pair
        k, v = pair.split('=', 1)
        if not LABEL.match(k.strip()) or k.strip() == '__name__' or not v.strip():
            return 'bad label %r' % pair
    return None


class Handler(http.server.BaseHTTPRequestHandler):
    def fail(self, why):
        self.send_response(400)
        self.end_headers()
        self.wfile.write(why.encode())
        sys.stderr.write('ingest_server: refused: %s\n' % why)

    def keep(self, name, data, mode):
        """DIR/NNNNNN.name, whole or not there: a test polls for it while profiles arrive."""
        n = len([f for f in os.listdir(self.server.dir) if f.endswith(('.query', '.push', '.otlp'))])
        base = os.path.join(self.server.dir, '%06d' % n)
        with open(base + '.' + name + '.tmp', mode) as f:
            f.write(data)
        os.rename(base + '.' + name + '.tmp', base + '.' + name)
        return base

    def connect_error(self, why):
        body = json.dumps({'code': 'invalid_argument', 'message': why}).encode()
        self.send_response(400)
        self.send_header('Content-Type', 'application/json')
        self.send_header('Content-Length', str(len(body)))
        self.end_headers()
        self.wfile.write(body)
        sys.stderr.write('ingest_server: refused: %s\n' % why)

    def push(self):
        body = self.rfile.read(int(self.headers.get('Content-Length', '0')))
        if self.headers.get('Content-Type', '') != 'application/proto':
            return self.connect_error('Content-Type is not application/proto')
        if self.headers.get('Connect-Protocol-Version', '') != '1':
            return self.connect_error('no Connect-Protocol-Version 1')
        if not body:
            return self.connect_error('empty PushRequest')
        self.keep('push', body, 'wb')
        self.send_response(200)
        self.send_header('Content-Type', 'application/proto')
        self.send_header('Content-Length', '0')
        self.end_headers()

    def otlp(self):
        body = self.rfile.read(int(self.headers.get('Content-Length', '0')))
        if self.headers.get('Content-Type', '') != 'application/x-protobuf':
            return self.fail('Content-Type is not application/x-protobuf')
        if not body:
            return self.fail('empty export request')
        self.keep('otlp', body, 'wb')
        self.send_response(200)
        self.send_header('Content-Type', 'application/x-protobuf')
        self.send_header('Content-Length', '0')
        self.end_headers()

    def do_POST(self):
        url = urllib.parse.urlsplit(self.path)
        if url.path == '/push.v1.PusherService/Push':
            return self.push()
        if url.path == '/v1development/profiles':
            return self.otlp()
        if url.path != '/ingest':
            return self.fail('no such path ' + url.path)
        q = urllib.parse.parse_qs(url.query, strict_parsing=True)
        q = {k: v[0] for k, v in q.items()}
        why = check_name(q.get('name', ''))
        if why:
            return self.fail(why)
        try:
            if int(q['from']) > int(q['until']):
                return self.fail('from after until')
            if 'sampleRate' in q and int(q['sampleRate']) <= 0:
                return self.fail('sampleRate')
        except (KeyError, ValueError):
            return self.fail('from/until/sampleRate')
        body = self.rfile.read(int(self.headers.get('Content-Length', '0')))
        ctype = self.headers.get('Content-Type', '')
        if 'multipart/form-data' not in ctype:
            return self.fail('not multipart')
        if q.get('format') == 'pprof':
            return self.fail('format=pprof with a multipart body')
        msg = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(
            b'Content-Type: ' + ctype.encode() + b'\r\n\r\n' + body)
        profile = None
        for part in msg.iter_parts():
            if part.get_param('name', header='content-disposition') == 'profile':
                profile = part.get_payload(decode=True)
        if not profile:
            return self.fail('no profile part')
        try:
            gzip.decompress(profile)
        except OSError:
            return self.fail('profile is not gzip')
        n = len([f for f in os.listdir(self.server.dir) if f.endswith(('.query', '.push', '.otlp'))])
        with open(os.path.join(self.server.dir, '%06d.pb.gz' % n), 'wb') as f:
            f.write(profile)
        self.keep('query', url.query + '\n', 'w')
        self.send_response(200)
        self.end_headers()

    def log_message(self, *args):
        pass


def main():
    d, portfile = sys.argv[1], sys.argv[2]
    port = int(sys.argv[3]) if len(sys.argv) > 3 else 0
    os.makedirs(d, exist_ok=True)
    srv = http.server.HTTPServer(('127.0.0.1', port), Handler)
    srv.dir = d
    with open(portfile + '.tmp', 'w') as f:
        f.write('%d\n' % srv.server_address[1])
    signal.signal(signal.SIGTERM,
                  lambda *_: threading.Thread(target=srv.shutdown).start())
    os.rename(portfile + '.tmp', portfile)
    srv.serve_forever()
    srv.server_close()


if __name__ == '__main__':
    main()
