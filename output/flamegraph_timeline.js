/*
 * jbpfprof flame graph page: the timeline. output/flamegraph.c puts this
 * file where output/flamegraph.html has the marker TIMELINE between two
 * pairs of at-signs, inside the page's one script, whose variables it
 * shares. Kept apart so that each file holds one part of the page.
 */
	/*
	 * The timeline: the recording's length in buckets (data.timeline), each
	 * cell the part of one stack's count (the node where it ends) in one
	 * bucket. A range of buckets [selFrom, selTo) is drawn by summing its
	 * cells into the nodes' self counts and the totals up the tree again.
	 */
	var TL_BARS = 56;        /* height of the bars of counts per bucket, CSS pixels */
	var TL_ROW = 12;         /* height of a thread's row of the heatmap */
	var TL_AXIS = 14;        /* the time axis below */
	var TL_MAX_ROWS = 40;    /* threads past these, the least busy, share one row */
	var TL_LABEL_MAX = 200;  /* the widest row label */
	var STATE_COLOURS = { "[running]": "hsl(140,45%,45%)", "[runnable]": "hsl(35,90%,55%)",
		"[sleeping]": "hsl(205,60%,70%)", "[blocked]": "hsl(0,65%,60%)" };
	var BAR_COLOUR = "hsl(215,35%,62%)", MARK_COLOUR = "hsl(300,60%,32%)";

	var tl = !isDiff && data.timeline && typeof data.timeline === "object" ? data.timeline : null;
	var tlBuckets = tl && tl.bucketMs > 0 ? Math.floor(Number(tl.buckets)) || 0 : 0;
	var tlBucketMs = tlBuckets ? Number(tl.bucketMs) : 0;
	var cellNode, cellBucket, cellCount, nrCells = 0;
	var selFrom = -1, selTo = -1;             /* the range drawn, in buckets; -1: the whole recording */
	var dragFrom = -1, dragTo = -1;           /* a range being dragged */
	var bucketMarked = null;                  /* per bucket, the count of stacks with a matching frame */
	var tlStates = [], tlStateOf, tlRows = [], tlRowOf, tlLabelW = 0;
	var bucketTotal, stateCounts, rowCounts, maxBucket = 0, maxRowCell = 0;
	var tlCanvas = document.getElementById("timeline"), tlCtx = tlCanvas.getContext("2d");
	var tlScroll = document.getElementById("timescroll");
	var timeInfo = document.getElementById("timeinfo");
	var tlWidth = 0, tlPlotW = 0;

	/*
	 * A row's label cut to width pixels in the middle: the threads of one
	 * pool share the start of their names and differ at the end
	 * ("http-nio-8080-exec-9"), and the end holds the thread id.
	 */
	function fitLabel(g, label, width) {
		var keep = label.length, cut = label;

		while (keep > 4 && g.measureText(cut).width > width) {
			keep -= 1;
			var head = Math.ceil(keep / 2);
			cut = label.slice(0, head) + "\u2026" + label.slice(label.length - (keep - head));
		}
		return cut;
	}

	function seconds(ms) {
		return (ms / 1000).toFixed(3);
	}

	/* The cells, checked: a cell naming no node or no bucket is left out. */
	function readCells() {
		var raw = Array.isArray(tl.cells) ? tl.cells : [], m = Math.floor(raw.length / 3);
		cellNode = new Int32Array(m);
		cellBucket = new Int32Array(m);
		cellCount = new Float64Array(m);
		for (var c = 0; c < m; c++) {
			var node = raw[3 * c], b = raw[3 * c + 1], v = Number(raw[3 * c + 2]);
			if (!(node >= 0 && node < n && b >= 0 && b < tlBuckets && v > 0))
				continue;
			cellNode[nrCells] = node;
			cellBucket[nrCells] = b;
			cellCount[nrCells++] = v;
		}
		tl.cells = null;
	}

	/*
	 * Per bucket: its count, split by state (the state frame a stack ends
	 * in), and per thread (the thread frame a stack begins in, or the one
	 * nearest its root).
	 */
	function summarise() {
		var stateIndex = {}, rowIndex = {}, threadOf = new Array(n), rowSums = [];
		tlStateOf = new Int32Array(n).fill(-1);
		for (var i = 0; i < n; i++) {
			var k = kindOf(i);
			threadOf[i] = k === "thread" && (parent[i] < 0 || threadOf[parent[i]] === null) ? nameOf(i) :
				parent[i] >= 0 ? threadOf[parent[i]] : null;
			if (k === "state") {
				var s = nameOf(i);
				if (!(s in stateIndex)) {
					stateIndex[s] = tlStates.length;
					tlStates.push(s);
				}
				tlStateOf[i] = stateIndex[s];
			}
		}
		bucketTotal = new Float64Array(tlBuckets);
		stateCounts = new Float64Array(tlBuckets * Math.max(tlStates.length, 1));
		var threadNames = [], cellThread = new Int32Array(nrCells).fill(-1);
		for (var c = 0; c < nrCells; c++) {
			var b = cellBucket[c], t = threadOf[cellNode[c]];
			bucketTotal[b] += cellCount[c];
			if (tlStateOf[cellNode[c]] >= 0)
				stateCounts[b * tlStates.length + tlStateOf[cellNode[c]]] += cellCount[c];
			if (t === null)
				continue;
			if (!(t in rowIndex)) {
				rowIndex[t] = threadNames.length;
				threadNames.push(t);
				rowSums.push(0);
			}
			cellThread[c] = rowIndex[t];
			rowSums[rowIndex[t]] += cellCount[c];
		}
		for (b = 0; b < tlBuckets; b++)
			maxBucket = Math.max(maxBucket, bucketTotal[b]);
		/* The busiest threads get rows of their own, the rest one row together. */
		var order = threadNames.map(function (x, j) { return j; });
		order.sort(function (a, z) { return rowSums[z] - rowSums[a] || (threadNames[a] < threadNames[z] ? -1 : 1); });
		var rowOfThread = new Int32Array(threadNames.length);
		order.forEach(function (j, r) {
			if (r < TL_MAX_ROWS) {
				tlRows.push(threadNames[j]);
				rowOfThread[j] = r;
			} else {
				rowOfThread[j] = TL_MAX_ROWS;
			}
		});
		if (order.length > TL_MAX_ROWS)
			tlRows.push("(" + (order.length - TL_MAX_ROWS) + " more threads)");
		rowCounts = new Float64Array(tlBuckets * tlRows.length);
		for (c = 0; c < nrCells; c++)
			if (cellThread[c] >= 0)
				rowCounts[rowOfThread[cellThread[c]] * tlBuckets + cellBucket[c]] += cellCount[c];
		for (c = 0; c < rowCounts.length; c++)
			maxRowCell = Math.max(maxRowCell, rowCounts[c]);
	}

	function bucketX(b) {
		return tlLabelW + b * tlPlotW / tlBuckets;
	}

	/* The bucket under x (CSS pixels from the canvas's left), clamped to the recording. */
	function bucketAt(x) {
		var b = Math.floor((x - tlLabelW) * tlBuckets / tlPlotW);
		return Math.max(0, Math.min(tlBuckets - 1, b));
	}

	function drawTimeline() {
		if (!tlBuckets)
			return;
		var height = TL_BARS + tlRows.length * TL_ROW + TL_AXIS;
		var ratio = window.devicePixelRatio || 1;
		/* Height first: it decides whether the box shows a scroll bar, which takes from the width. */
		tlCanvas.style.height = height + "px";
		tlWidth = Math.max(tlScroll.clientWidth, 100);
		tlCanvas.style.width = tlWidth + "px";
		tlCanvas.width = Math.max(1, Math.floor(tlWidth * ratio));
		tlCanvas.height = Math.max(1, Math.floor(height * ratio));
		var g = tlCtx;
		g.setTransform(ratio, 0, 0, ratio, 0, 0);
		g.clearRect(0, 0, tlWidth, height);
		g.font = FONT;
		g.textBaseline = "middle";
		tlLabelW = 0;
		for (var r = 0; r < tlRows.length; r++)
			tlLabelW = Math.max(tlLabelW, Math.min(TL_LABEL_MAX, g.measureText(tlRows[r]).width + 8));
		tlPlotW = Math.max(tlWidth - tlLabelW, 10);
		var bw = tlPlotW / tlBuckets, scale = maxBucket > 0 ? (TL_BARS - 2) / maxBucket : 0;
		for (var b = 0; b < tlBuckets; b++) {
			var x = bucketX(b), base = TL_BARS;
			if (tlStates.length) {
				for (var s = 0; s < tlStates.length; s++) {
					var h = stateCounts[b * tlStates.length + s] * scale;
					g.fillStyle = STATE_COLOURS[tlStates[s]] || "hsl(0,0%,60%)";
					g.fillRect(x, base - h, Math.max(bw - 0.5, 0.5), h);
					base -= h;
				}
			}
			/* What no state split: all of it when stacks have no state frames. */
			var rest = bucketTotal[b] * scale - (TL_BARS - base);
			if (rest > 0.01) {
				g.fillStyle = BAR_COLOUR;
				g.fillRect(x, base - rest, Math.max(bw - 0.5, 0.5), rest);
			}
			if (bucketMarked !== null && bucketMarked[b] > 0) {
				g.fillStyle = MARK_COLOUR;
				var mh = Math.max(bucketMarked[b] * scale, 2);
				g.fillRect(x, TL_BARS - mh, Math.max(bw - 0.5, 0.5), mh);
			}
			for (r = 0; r < tlRows.length; r++) {
				var v = rowCounts[r * tlBuckets + b];
				if (v <= 0)
					continue;
				var marked = bucketMarked !== null && bucketMarked[b] > 0;
				g.fillStyle = "hsla(" + (marked ? 300 : 215) + ",70%,35%," +
					(0.15 + 0.85 * v / maxRowCell).toFixed(3) + ")";
				g.fillRect(x, TL_BARS + r * TL_ROW, Math.max(bw - 0.5, 0.5), TL_ROW - 1);
			}
		}
		g.fillStyle = "#333";
		for (r = 0; r < tlRows.length; r++)
			g.fillText(fitLabel(g, tlRows[r], tlLabelW - 8), 2, TL_BARS + r * TL_ROW + TL_ROW / 2);
		var axisY = TL_BARS + tlRows.length * TL_ROW;
		g.fillStyle = "#555";
		g.fillRect(tlLabelW, axisY, tlPlotW, 1);
		g.textBaseline = "top";
		var totalMs = tlBuckets * tlBucketMs, steps = 5;
		for (var k = 0; k <= steps; k++) {
			var text = seconds(totalMs * k / steps) + " s";
			var tx = tlLabelW + tlPlotW * k / steps - (k === steps ? g.measureText(text).width : k ? g.measureText(text).width / 2 : 0);
			g.fillText(text, tx, axisY + 2);
		}
		/* The range drawn (or being dragged): the rest is dimmed. */
		var lo = dragFrom >= 0 ? Math.min(dragFrom, dragTo) : selFrom;
		var hi = dragFrom >= 0 ? Math.max(dragFrom, dragTo) + 1 : selTo;
		if (lo >= 0) {
			g.fillStyle = "rgba(250,250,250,0.7)";
			g.fillRect(tlLabelW, 0, bucketX(lo) - tlLabelW, axisY);
			g.fillRect(bucketX(hi), 0, tlLabelW + tlPlotW - bucketX(hi), axisY);
			g.strokeStyle = "#1a4d8f";
			g.lineWidth = 1.5;
			g.strokeRect(bucketX(lo) + 0.75, 0.75, bucketX(hi) - bucketX(lo) - 1.5, axisY - 1.5);
		}
	}

	function describeRange() {
		var whole = tlBuckets * tlBucketMs;
		var untimed = Number(tl.untimed) || 0;
		if (selFrom < 0) {
			timeInfo.textContent = "Whole recording, " + seconds(whole) + " s in buckets of " + tlBucketMs +
				" ms. Drag across the timeline to see a range alone." +
				(untimed > 0 ? " " + formatCount(untimed) + " " + unit + " have no time and are shown only here." : "");
			return;
		}
		timeInfo.textContent = "Selected " + seconds(selFrom * tlBucketMs) + " s \u2013 " +
			seconds(Math.min(selTo * tlBucketMs, whole)) + " s: " + formatCount(grandTotal) + " " + unit +
			" of " + formatCount(wholeGrandTotal);
	}

	/* Draws buckets [from, to) alone, or the whole recording for from < 0. */
	function showRange(from, to) {
		if (from >= 0 && !(to > from)) {
			from = to = -1;
		}
		selFrom = from;
		selTo = to;
		if (from < 0) {
			self.set(wholeSelf);
			total.set(wholeTotal);
		} else {
			self.fill(0);
			for (var c = 0; c < nrCells; c++)
				if (cellBucket[c] >= from && cellBucket[c] < to)
					self[cellNode[c]] += cellCount[c];
			/* Children follow their parent in preorder: sum up from the end. */
			for (var i = n - 1; i >= 0; i--)
				total[i] = self[i];
			for (i = n - 1; i > 0; i--)
				total[parent[i]] += total[i];
		}
		layout();
		grandTotal = n ? total[0] : 0;
		statesCache.node = -1;
		if (zoom !== 0 && total[zoom] <= 0)
			zoom = 0;
		describeRange();
		setZoom(zoom);
		if (searchBox.value)
			applySearch();
		drawTimeline();
	}

	/* The range as the address gives it (t=FROM-TO, seconds), in whole buckets around it. */
	function rangeFromAddress() {
		var range = addressParts().range, m = range ? /^([0-9.]+)-([0-9.]+)$/.exec(range) : null;
		if (!m)
			return [-1, -1];
		var from = Math.floor(Number(m[1]) * 1000 / tlBucketMs + 1e-9);
		var to = Math.ceil(Number(m[2]) * 1000 / tlBucketMs - 1e-9);
		from = Math.max(0, Math.min(tlBuckets, from));
		to = Math.max(0, Math.min(tlBuckets, to));
		return to > from ? [from, to] : [-1, -1];
	}

	/* The address for the range shown: the event's part kept, the range's replaced. */
	function writeAddress() {
		var parts = location.hash.slice(1).split("&").filter(function (p) { return p && p.indexOf("t=") !== 0; });
		if (selFrom >= 0)
			parts.push("t=" + seconds(selFrom * tlBucketMs) + "-" + seconds(selTo * tlBucketMs));
		var hash = parts.length ? "#" + parts.join("&") : "";
		if (hash !== location.hash)
			history.replaceState(null, "", hash || location.pathname + location.search);
	}

	function markSearch() {
		if (!tlBuckets)
			return;
		if (matchFrame === null) {
			bucketMarked = null;
		} else {
			/* A stack matches when a frame on its path does. */
			var onPath = new Uint8Array(n);
			for (var i = 0; i < n; i++)
				onPath[i] = isMatch(i) || (parent[i] >= 0 && onPath[parent[i]]) ? 1 : 0;
			bucketMarked = new Float64Array(tlBuckets);
			for (var c = 0; c < nrCells; c++)
				if (onPath[cellNode[c]])
					bucketMarked[cellBucket[c]] += cellCount[c];
		}
		drawTimeline();
	}

	function setUpTimeline() {
		var box = document.getElementById("timebox");
		if (tl && tl.omitted === true) {
			box.hidden = false;
			tlCanvas.hidden = true;
			document.getElementById("timeclear").hidden = true;
			timeInfo.textContent = "No timeline: this profile has too many stacks for the page's bound; " +
				"jbpfprof convert --from and --to cut a recording by time.";
			return;
		}
		if (!tlBuckets || !(tlBucketMs > 0))
			return;
		box.hidden = false;
		readCells();
		summarise();
		tlCanvas.addEventListener("mousedown", function (ev) {
			var r = tlCanvas.getBoundingClientRect(), x = ev.clientX - r.left;
			if (ev.button !== 0 || x < tlLabelW)
				return;
			ev.preventDefault();
			dragFrom = dragTo = bucketAt(x);
			drawTimeline();
		});
		window.addEventListener("mousemove", function (ev) {
			if (dragFrom < 0)
				return;
			dragTo = bucketAt(ev.clientX - tlCanvas.getBoundingClientRect().left);
			drawTimeline();
		});
		window.addEventListener("mouseup", function (ev) {
			if (dragFrom < 0)
				return;
			dragTo = bucketAt(ev.clientX - tlCanvas.getBoundingClientRect().left);
			var lo = Math.min(dragFrom, dragTo), hi = Math.max(dragFrom, dragTo) + 1;
			dragFrom = dragTo = -1;
			showRange(lo, hi);
			writeAddress();
		});
		document.getElementById("timeclear").addEventListener("click", function () {
			showRange(-1, -1);
			writeAddress();
		});
		window.addEventListener("hashchange", function () {
			var r = rangeFromAddress();
			if (r[0] !== selFrom || r[1] !== selTo)
				showRange(r[0], r[1]);
		});
		var first = rangeFromAddress();
		if (first[0] >= 0)
			showRange(first[0], first[1]);
		else
			describeRange();
	}
