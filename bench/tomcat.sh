# shellcheck shell=bash
# Debian's Tomcat 10 serving one JSP, for the scripts that load a Java
# server (bench/server.sh, examples/tomcat_stall.sh). Source it; it needs
# tomcat10, curl and python3, and the caller's JAVA_HOME.
#
#   tomcat_start DIR JSP [ATTRIBUTES]
#       Runs Tomcat from /usr/share/tomcat10 with a CATALINA_BASE of its own
#       in DIR (which must exist): Debian's configuration, on a free
#       loopback port, with no shutdown port, serving the text JSP as
#       index.jsp; ATTRIBUTES are added to the HTTP connector (for example
#       maxThreads="8"). Returns once a request has been served, with
#       tomcat (the JVM's pid: catalina.sh run execs java), port and url
#       (the JSP's address with the query x=1, which the JSPs print) set;
#       else prints Tomcat's log and returns 1.
#   tomcat_stop
#       Stops it: TERM, then KILL after 10 s. For the caller's exit trap.

tomcat_home=/usr/share/tomcat10
tomcat=

# Says why Tomcat cannot run here, or nothing.
tomcat_missing() {
	[ -x "$tomcat_home/bin/catalina.sh" ] || echo "needs tomcat10 (apt-get install tomcat10)"
}

tomcat_start() {
	local dir=$1 jsp=$2 attributes=${3:-}
	local base=$dir/base
	port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
	mkdir -p "$base/conf" "$base/logs" "$base/temp" "$base/work" "$base/webapps/ROOT"
	cp "$tomcat_home"/etc/* "$base/conf/"
	# The first port="8080" is the HTTP connector's; the other is in a comment.
	sed -i -e "0,/port=\"8080\"/s//port=\"$port\" address=\"127.0.0.1\" $attributes/" \
		-e 's/port="8005"/port="-1"/' "$base/conf/server.xml"
	printf '%s\n' "$jsp" >"$base/webapps/ROOT/index.jsp"
	CATALINA_HOME=$tomcat_home CATALINA_BASE=$base CATALINA_TMPDIR=$base/temp \
		"$tomcat_home/bin/catalina.sh" run >"$dir/tomcat.log" 2>&1 &
	tomcat=$!
	url="http://127.0.0.1:$port/index.jsp?x=1"
	for _ in $(seq 120); do
		curl -sf "$url" >/dev/null 2>&1 && return 0
		kill -0 "$tomcat" 2>/dev/null || break
		sleep 0.5
	done
	echo "${0##*/}: Tomcat did not start:" >&2
	cat "$dir/tomcat.log" >&2
	return 1
}

tomcat_stop() {
	if [ -n "$tomcat" ] && kill "$tomcat" 2>/dev/null; then
		for _ in $(seq 50); do kill -0 "$tomcat" 2>/dev/null || break; sleep 0.2; done
		kill -9 "$tomcat" 2>/dev/null || true
	fi
	tomcat=
}
