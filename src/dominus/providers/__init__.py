"""Where the pipeline's outside facts come from: DNS, RDAP, trademarks, keyword data and
comparable sales. Each is a small Protocol with a real implementation and an offline one fed by
local files (the bundled sample data, labelled as such wherever it is shown)."""
