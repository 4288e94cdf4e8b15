# Print an optspec for argparse to handle cmd's options that are independent of any subcommand.
function __fish_folio_global_optspecs
    string join \n data-dir= store-url= config= json backend= model-dir= model= threads= v/verbose h/help V/version
end

function __fish_folio_needs_command
    # Figure out if the current invocation already has a command.
    set -l cmd (commandline -opc)
    set -e cmd[1]
    argparse -s (__fish_folio_global_optspecs) -- $cmd 2>/dev/null
    or return
    if set -q argv[1]
        # Also print the command, so this can be used to figure out what it is.
        echo $argv[1]
        return 1
    end
    return 0
end

function __fish_folio_using_subcommand
    set -l cmd (__fish_folio_needs_command)
    test -z "$cmd"
    and return 1
    contains -- $cmd[1] $argv
end

complete -c folio -n "__fish_folio_needs_command" -l data-dir -d 'Data directory (default $FOLIO_DATA_DIR, else ~/.local/share/folio/data)' -r -F
complete -c folio -n "__fish_folio_needs_command" -l store-url -d 'A PostgreSQL server to use instead of the data directory (default $FOLIO_STORE_URL, else [store] url)' -r
complete -c folio -n "__fish_folio_needs_command" -l config -d 'Configuration file (default $FOLIO_CONFIG, else ~/.config/folio/config.toml)' -r -F
complete -c folio -n "__fish_folio_needs_command" -l backend -d 'Embedding backend: onnx, candle or openai' -r
complete -c folio -n "__fish_folio_needs_command" -l model-dir -d 'Model folder in Hugging Face layout' -r -F
complete -c folio -n "__fish_folio_needs_command" -l model -d 'Model by catalogue name (`folio models ls`) or hub id ORG/NAME[@REVISION], fetched on first use (default $FOLIO_MODEL, else [model] name, else all-MiniLM-L6-v2)' -r
complete -c folio -n "__fish_folio_needs_command" -l threads -d 'Encoder threads' -r
complete -c folio -n "__fish_folio_needs_command" -l json -d 'Print results as JSON'
complete -c folio -n "__fish_folio_needs_command" -s v -l verbose -d 'Log progress details to stderr'
complete -c folio -n "__fish_folio_needs_command" -s h -l help -d 'Print help'
complete -c folio -n "__fish_folio_needs_command" -s V -l version -d 'Print version'
complete -c folio -n "__fish_folio_needs_command" -f -a "ingest" -d 'Ingest files, folders (recursively) and URLs into a library'
complete -c folio -n "__fish_folio_needs_command" -f -a "search" -d 'Search a library'
complete -c folio -n "__fish_folio_needs_command" -f -a "get" -d 'Show a document (metadata, and text or chunks on request)'
complete -c folio -n "__fish_folio_needs_command" -f -a "ls" -d 'List libraries, or the documents of one library'
complete -c folio -n "__fish_folio_needs_command" -f -a "rm" -d 'Delete a document, or with --library a whole library'
complete -c folio -n "__fish_folio_needs_command" -f -a "create" -d 'Create an empty library (a citeloom project), pinned to the current model; ingesting creates libraries too'
complete -c folio -n "__fish_folio_needs_command" -f -a "inspect" -d 'Statistics of a library'
complete -c folio -n "__fish_folio_needs_command" -f -a "check" -d 'Check that every document of a library is whole in every index (exit 1 when not)'
complete -c folio -n "__fish_folio_needs_command" -f -a "rebuild" -d 'Re-embed a library with the current model (after a model change)'
complete -c folio -n "__fish_folio_needs_command" -f -a "copy" -d 'Copy a library, vectors included, from another store into this one (an embedded data directory into PostgreSQL, or back). Resumable: documents already copied are left alone'
complete -c folio -n "__fish_folio_needs_command" -f -a "eval" -d 'Evaluate retrieval on a BEIR directory (nDCG@10, Recall@100, MRR@10)'
complete -c folio -n "__fish_folio_needs_command" -f -a "bench" -d 'Benchmark search on a synthetic library, or the encoder on a corpus'
complete -c folio -n "__fish_folio_needs_command" -f -a "serve" -d 'Serve MCP over stdio (for Claude Desktop, Cursor, Claude Code) or HTTP'
complete -c folio -n "__fish_folio_needs_command" -f -a "schema" -d 'Declare or show a library\'s record schema (typed fields and rules)'
complete -c folio -n "__fish_folio_needs_command" -f -a "facets" -d 'Counts and statistics of a library\'s records, grouped by fields'
complete -c folio -n "__fish_folio_needs_command" -f -a "references" -d 'Attach a reference list (CSL-JSON or BibTeX) to a library\'s documents'
complete -c folio -n "__fish_folio_needs_command" -f -a "quote" -d 'Find where a passage occurs: document, page and char offsets'
complete -c folio -n "__fish_folio_needs_command" -f -a "keys" -d 'Access keys of a shared server (`folio serve --http --auth keys`)'
complete -c folio -n "__fish_folio_needs_command" -f -a "entities" -d 'The entities a library\'s documents mention most (names found while ingesting); `import` declares entities, `relink` reads the stored documents again for them'
complete -c folio -n "__fish_folio_needs_command" -f -a "entity" -d 'One entity\'s card: declared aliases, attributes and relations, mentions, documents, related entities with evidence'
complete -c folio -n "__fish_folio_needs_command" -f -a "sync" -d 'Make a library\'s documents from a folder exactly the folder\'s files: add, replace, move (nothing re-embedded) and remove, in one pass or, with --watch, whenever the folder changes'
complete -c folio -n "__fish_folio_needs_command" -f -a "models" -d 'The model catalogue (`ls`), fetching from the Hugging Face hub (`pull`), and where an installed model is (`path`)'
complete -c folio -n "__fish_folio_needs_command" -f -a "completions" -d 'Print a shell completion script: `folio completions bash > ~/.local/share/bash-completion/completions/folio`'
complete -c folio -n "__fish_folio_needs_command" -f -a "man" -d 'Print the man page, folio(1), in roff: `folio man | man -l -`'
complete -c folio -n "__fish_folio_needs_command" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c folio -n "__fish_folio_using_subcommand ingest" -s l -l library -r
complete -c folio -n "__fish_folio_using_subcommand ingest" -l max-concurrency -d 'Accepted for compatibility with bulk-ingest scripts (at least 1): folio reads files in turn and embeds them in batches on every core, whatever the value' -r
complete -c folio -n "__fish_folio_using_subcommand ingest" -l title -d 'Title for the document (with a single input)' -r
complete -c folio -n "__fish_folio_using_subcommand ingest" -l meta -d 'Metadata as KEY=VALUE (repeatable); numbers and true/false are typed' -r
complete -c folio -n "__fish_folio_using_subcommand ingest" -l schema -d 'Declare the library\'s record schema (TOML or JSON) before loading records (.jsonl, .json, .csv, .tsv inputs are records files)' -r -F
complete -c folio -n "__fish_folio_using_subcommand ingest" -l references -d 'A reference list (CSL-JSON or Better BibTeX .bib) whose entries are matched to the library\'s documents by DOI, file name or title' -r -F
complete -c folio -n "__fish_folio_using_subcommand ingest" -l zotero -d 'A Zotero data directory (e.g. ~/Zotero): its items\' PDF/HTML/EPUB/image attachments become documents with the items\' citation metadata' -r -F
complete -c folio -n "__fish_folio_using_subcommand ingest" -l collection -d 'With --zotero: only items in this collection (or its subcollections)' -r
complete -c folio -n "__fish_folio_using_subcommand ingest" -l tag -d 'With --zotero: only items with this tag' -r
complete -c folio -n "__fish_folio_using_subcommand ingest" -l ocr-languages -d 'OCR languages for scanned PDF pages, comma-separated (en,de or eng,deu); a Zotero item\'s own language comes first, [ocr] languages after' -r
complete -c folio -n "__fish_folio_using_subcommand ingest" -l data-dir -d 'Data directory (default $FOLIO_DATA_DIR, else ~/.local/share/folio/data)' -r -F
complete -c folio -n "__fish_folio_using_subcommand ingest" -l store-url -d 'A PostgreSQL server to use instead of the data directory (default $FOLIO_STORE_URL, else [store] url)' -r
complete -c folio -n "__fish_folio_using_subcommand ingest" -l config -d 'Configuration file (default $FOLIO_CONFIG, else ~/.config/folio/config.toml)' -r -F
complete -c folio -n "__fish_folio_using_subcommand ingest" -l backend -d 'Embedding backend: onnx, candle or openai' -r
complete -c folio -n "__fish_folio_using_subcommand ingest" -l model-dir -d 'Model folder in Hugging Face layout' -r -F
complete -c folio -n "__fish_folio_using_subcommand ingest" -l model -d 'Model by catalogue name (`folio models ls`) or hub id ORG/NAME[@REVISION], fetched on first use (default $FOLIO_MODEL, else [model] name, else all-MiniLM-L6-v2)' -r
complete -c folio -n "__fish_folio_using_subcommand ingest" -l threads -d 'Encoder threads' -r
complete -c folio -n "__fish_folio_using_subcommand ingest" -l no-recursive -d 'Do not descend into subfolders of the folders given'
complete -c folio -n "__fish_folio_using_subcommand ingest" -l force -d 'Re-index even when unchanged'
complete -c folio -n "__fish_folio_using_subcommand ingest" -l archives -d 'Read the ZIP and TAR archives found in folders (each member a document under the archive\'s path); an archive named as an input is read either way'
complete -c folio -n "__fish_folio_using_subcommand ingest" -l allow-private-urls -d 'Allow URLs that resolve to private, loopback or link-local addresses'
complete -c folio -n "__fish_folio_using_subcommand ingest" -l watch -d 'After ingesting one folder, keep following its changes (`folio sync --watch`) until interrupted'
complete -c folio -n "__fish_folio_using_subcommand ingest" -l json -d 'Print results as JSON'
complete -c folio -n "__fish_folio_using_subcommand ingest" -s v -l verbose -d 'Log progress details to stderr'
complete -c folio -n "__fish_folio_using_subcommand ingest" -s h -l help -d 'Print help'
complete -c folio -n "__fish_folio_using_subcommand search" -s l -l library -r
complete -c folio -n "__fish_folio_using_subcommand search" -l mode -d 'hybrid (BM25 and vectors fused), lexical (BM25) or dense (vectors)' -r -f -a "hybrid\t''
lexical\t''
dense\t''"
complete -c folio -n "__fish_folio_using_subcommand search" -l fusion -d 'Hybrid fusion: weighted (default) or rrf' -r -f -a "weighted\t''
rrf\t''"
complete -c folio -n "__fish_folio_using_subcommand search" -l rrf-k -d 'RRF k' -r
complete -c folio -n "__fish_folio_using_subcommand search" -l lexical-weight -d 'Weight of the lexical ranking (weighted: in [0, 1]; rrf: any >= 0)' -r
complete -c folio -n "__fish_folio_using_subcommand search" -l dense-weight -d 'Weight of the dense ranking (rrf)' -r
complete -c folio -n "__fish_folio_using_subcommand search" -l k1 -r
complete -c folio -n "__fish_folio_using_subcommand search" -l b -r
complete -c folio -n "__fish_folio_using_subcommand search" -s k -l top-k -r
complete -c folio -n "__fish_folio_using_subcommand search" -l filter -d 'Filter as JSON, e.g. \'{"year": {"gte": 2019}, "tags": ["ml"]}\'' -r
complete -c folio -n "__fish_folio_using_subcommand search" -l response-mode -d 'How much of each hit: ids_only, metadata, preview (about 200 characters) or full (the chunk\'s text, up to --max-chars)' -r -f -a "ids_only\t''
metadata\t''
preview\t''
full\t''"
complete -c folio -n "__fish_folio_using_subcommand search" -l max-chars -d 'Cap on each chunk\'s text in full mode' -r
complete -c folio -n "__fish_folio_using_subcommand search" -l data-dir -d 'Data directory (default $FOLIO_DATA_DIR, else ~/.local/share/folio/data)' -r -F
complete -c folio -n "__fish_folio_using_subcommand search" -l store-url -d 'A PostgreSQL server to use instead of the data directory (default $FOLIO_STORE_URL, else [store] url)' -r
complete -c folio -n "__fish_folio_using_subcommand search" -l config -d 'Configuration file (default $FOLIO_CONFIG, else ~/.config/folio/config.toml)' -r -F
complete -c folio -n "__fish_folio_using_subcommand search" -l backend -d 'Embedding backend: onnx, candle or openai' -r
complete -c folio -n "__fish_folio_using_subcommand search" -l model-dir -d 'Model folder in Hugging Face layout' -r -F
complete -c folio -n "__fish_folio_using_subcommand search" -l model -d 'Model by catalogue name (`folio models ls`) or hub id ORG/NAME[@REVISION], fetched on first use (default $FOLIO_MODEL, else [model] name, else all-MiniLM-L6-v2)' -r
complete -c folio -n "__fish_folio_using_subcommand search" -l threads -d 'Encoder threads' -r
complete -c folio -n "__fish_folio_using_subcommand search" -l rerank -d 'Rerank the best candidates with the configured cross-encoder'
complete -c folio -n "__fish_folio_using_subcommand search" -l no-rerank -d 'Do not rerank, even where the configuration enables it'
complete -c folio -n "__fish_folio_using_subcommand search" -l no-group -d 'One hit per chunk instead of per document'
complete -c folio -n "__fish_folio_using_subcommand search" -l json -d 'Print results as JSON'
complete -c folio -n "__fish_folio_using_subcommand search" -s v -l verbose -d 'Log progress details to stderr'
complete -c folio -n "__fish_folio_using_subcommand search" -s h -l help -d 'Print help'
complete -c folio -n "__fish_folio_using_subcommand get" -l order-by -r
complete -c folio -n "__fish_folio_using_subcommand get" -l group-by -r
complete -c folio -n "__fish_folio_using_subcommand get" -l data-dir -d 'Data directory (default $FOLIO_DATA_DIR, else ~/.local/share/folio/data)' -r -F
complete -c folio -n "__fish_folio_using_subcommand get" -l store-url -d 'A PostgreSQL server to use instead of the data directory (default $FOLIO_STORE_URL, else [store] url)' -r
complete -c folio -n "__fish_folio_using_subcommand get" -l config -d 'Configuration file (default $FOLIO_CONFIG, else ~/.config/folio/config.toml)' -r -F
complete -c folio -n "__fish_folio_using_subcommand get" -l backend -d 'Embedding backend: onnx, candle or openai' -r
complete -c folio -n "__fish_folio_using_subcommand get" -l model-dir -d 'Model folder in Hugging Face layout' -r -F
complete -c folio -n "__fish_folio_using_subcommand get" -l model -d 'Model by catalogue name (`folio models ls`) or hub id ORG/NAME[@REVISION], fetched on first use (default $FOLIO_MODEL, else [model] name, else all-MiniLM-L6-v2)' -r
complete -c folio -n "__fish_folio_using_subcommand get" -l threads -d 'Encoder threads' -r
complete -c folio -n "__fish_folio_using_subcommand get" -l text -d 'Print the document text'
complete -c folio -n "__fish_folio_using_subcommand get" -l chunks -d 'Print the chunks'
complete -c folio -n "__fish_folio_using_subcommand get" -l neighbours -d 'Print the records just before and after this one (in the order its library\'s schema declares, or --order-by within --group-by)'
complete -c folio -n "__fish_folio_using_subcommand get" -l json -d 'Print results as JSON'
complete -c folio -n "__fish_folio_using_subcommand get" -s v -l verbose -d 'Log progress details to stderr'
complete -c folio -n "__fish_folio_using_subcommand get" -s h -l help -d 'Print help'
complete -c folio -n "__fish_folio_using_subcommand ls" -l offset -r
complete -c folio -n "__fish_folio_using_subcommand ls" -l limit -r
complete -c folio -n "__fish_folio_using_subcommand ls" -l data-dir -d 'Data directory (default $FOLIO_DATA_DIR, else ~/.local/share/folio/data)' -r -F
complete -c folio -n "__fish_folio_using_subcommand ls" -l store-url -d 'A PostgreSQL server to use instead of the data directory (default $FOLIO_STORE_URL, else [store] url)' -r
complete -c folio -n "__fish_folio_using_subcommand ls" -l config -d 'Configuration file (default $FOLIO_CONFIG, else ~/.config/folio/config.toml)' -r -F
complete -c folio -n "__fish_folio_using_subcommand ls" -l backend -d 'Embedding backend: onnx, candle or openai' -r
complete -c folio -n "__fish_folio_using_subcommand ls" -l model-dir -d 'Model folder in Hugging Face layout' -r -F
complete -c folio -n "__fish_folio_using_subcommand ls" -l model -d 'Model by catalogue name (`folio models ls`) or hub id ORG/NAME[@REVISION], fetched on first use (default $FOLIO_MODEL, else [model] name, else all-MiniLM-L6-v2)' -r
complete -c folio -n "__fish_folio_using_subcommand ls" -l threads -d 'Encoder threads' -r
complete -c folio -n "__fish_folio_using_subcommand ls" -l json -d 'Print results as JSON'
complete -c folio -n "__fish_folio_using_subcommand ls" -s v -l verbose -d 'Log progress details to stderr'
complete -c folio -n "__fish_folio_using_subcommand ls" -s h -l help -d 'Print help'
complete -c folio -n "__fish_folio_using_subcommand rm" -l library -d 'Delete this whole library instead' -r
complete -c folio -n "__fish_folio_using_subcommand rm" -l data-dir -d 'Data directory (default $FOLIO_DATA_DIR, else ~/.local/share/folio/data)' -r -F
complete -c folio -n "__fish_folio_using_subcommand rm" -l store-url -d 'A PostgreSQL server to use instead of the data directory (default $FOLIO_STORE_URL, else [store] url)' -r
complete -c folio -n "__fish_folio_using_subcommand rm" -l config -d 'Configuration file (default $FOLIO_CONFIG, else ~/.config/folio/config.toml)' -r -F
complete -c folio -n "__fish_folio_using_subcommand rm" -l backend -d 'Embedding backend: onnx, candle or openai' -r
complete -c folio -n "__fish_folio_using_subcommand rm" -l model-dir -d 'Model folder in Hugging Face layout' -r -F
complete -c folio -n "__fish_folio_using_subcommand rm" -l model -d 'Model by catalogue name (`folio models ls`) or hub id ORG/NAME[@REVISION], fetched on first use (default $FOLIO_MODEL, else [model] name, else all-MiniLM-L6-v2)' -r
complete -c folio -n "__fish_folio_using_subcommand rm" -l threads -d 'Encoder threads' -r
complete -c folio -n "__fish_folio_using_subcommand rm" -l json -d 'Print results as JSON'
complete -c folio -n "__fish_folio_using_subcommand rm" -s v -l verbose -d 'Log progress details to stderr'
complete -c folio -n "__fish_folio_using_subcommand rm" -s h -l help -d 'Print help'
complete -c folio -n "__fish_folio_using_subcommand create" -l data-dir -d 'Data directory (default $FOLIO_DATA_DIR, else ~/.local/share/folio/data)' -r -F
complete -c folio -n "__fish_folio_using_subcommand create" -l store-url -d 'A PostgreSQL server to use instead of the data directory (default $FOLIO_STORE_URL, else [store] url)' -r
complete -c folio -n "__fish_folio_using_subcommand create" -l config -d 'Configuration file (default $FOLIO_CONFIG, else ~/.config/folio/config.toml)' -r -F
complete -c folio -n "__fish_folio_using_subcommand create" -l backend -d 'Embedding backend: onnx, candle or openai' -r
complete -c folio -n "__fish_folio_using_subcommand create" -l model-dir -d 'Model folder in Hugging Face layout' -r -F
complete -c folio -n "__fish_folio_using_subcommand create" -l model -d 'Model by catalogue name (`folio models ls`) or hub id ORG/NAME[@REVISION], fetched on first use (default $FOLIO_MODEL, else [model] name, else all-MiniLM-L6-v2)' -r
complete -c folio -n "__fish_folio_using_subcommand create" -l threads -d 'Encoder threads' -r
complete -c folio -n "__fish_folio_using_subcommand create" -l json -d 'Print results as JSON'
complete -c folio -n "__fish_folio_using_subcommand create" -s v -l verbose -d 'Log progress details to stderr'
complete -c folio -n "__fish_folio_using_subcommand create" -s h -l help -d 'Print help'
complete -c folio -n "__fish_folio_using_subcommand inspect" -l data-dir -d 'Data directory (default $FOLIO_DATA_DIR, else ~/.local/share/folio/data)' -r -F
complete -c folio -n "__fish_folio_using_subcommand inspect" -l store-url -d 'A PostgreSQL server to use instead of the data directory (default $FOLIO_STORE_URL, else [store] url)' -r
complete -c folio -n "__fish_folio_using_subcommand inspect" -l config -d 'Configuration file (default $FOLIO_CONFIG, else ~/.config/folio/config.toml)' -r -F
complete -c folio -n "__fish_folio_using_subcommand inspect" -l backend -d 'Embedding backend: onnx, candle or openai' -r
complete -c folio -n "__fish_folio_using_subcommand inspect" -l model-dir -d 'Model folder in Hugging Face layout' -r -F
complete -c folio -n "__fish_folio_using_subcommand inspect" -l model -d 'Model by catalogue name (`folio models ls`) or hub id ORG/NAME[@REVISION], fetched on first use (default $FOLIO_MODEL, else [model] name, else all-MiniLM-L6-v2)' -r
complete -c folio -n "__fish_folio_using_subcommand inspect" -l threads -d 'Encoder threads' -r
complete -c folio -n "__fish_folio_using_subcommand inspect" -l json -d 'Print results as JSON'
complete -c folio -n "__fish_folio_using_subcommand inspect" -s v -l verbose -d 'Log progress details to stderr'
complete -c folio -n "__fish_folio_using_subcommand inspect" -s h -l help -d 'Print help'
complete -c folio -n "__fish_folio_using_subcommand check" -l data-dir -d 'Data directory (default $FOLIO_DATA_DIR, else ~/.local/share/folio/data)' -r -F
complete -c folio -n "__fish_folio_using_subcommand check" -l store-url -d 'A PostgreSQL server to use instead of the data directory (default $FOLIO_STORE_URL, else [store] url)' -r
complete -c folio -n "__fish_folio_using_subcommand check" -l config -d 'Configuration file (default $FOLIO_CONFIG, else ~/.config/folio/config.toml)' -r -F
complete -c folio -n "__fish_folio_using_subcommand check" -l backend -d 'Embedding backend: onnx, candle or openai' -r
complete -c folio -n "__fish_folio_using_subcommand check" -l model-dir -d 'Model folder in Hugging Face layout' -r -F
complete -c folio -n "__fish_folio_using_subcommand check" -l model -d 'Model by catalogue name (`folio models ls`) or hub id ORG/NAME[@REVISION], fetched on first use (default $FOLIO_MODEL, else [model] name, else all-MiniLM-L6-v2)' -r
complete -c folio -n "__fish_folio_using_subcommand check" -l threads -d 'Encoder threads' -r
complete -c folio -n "__fish_folio_using_subcommand check" -l json -d 'Print results as JSON'
complete -c folio -n "__fish_folio_using_subcommand check" -s v -l verbose -d 'Log progress details to stderr'
complete -c folio -n "__fish_folio_using_subcommand check" -s h -l help -d 'Print help'
complete -c folio -n "__fish_folio_using_subcommand rebuild" -l data-dir -d 'Data directory (default $FOLIO_DATA_DIR, else ~/.local/share/folio/data)' -r -F
complete -c folio -n "__fish_folio_using_subcommand rebuild" -l store-url -d 'A PostgreSQL server to use instead of the data directory (default $FOLIO_STORE_URL, else [store] url)' -r
complete -c folio -n "__fish_folio_using_subcommand rebuild" -l config -d 'Configuration file (default $FOLIO_CONFIG, else ~/.config/folio/config.toml)' -r -F
complete -c folio -n "__fish_folio_using_subcommand rebuild" -l backend -d 'Embedding backend: onnx, candle or openai' -r
complete -c folio -n "__fish_folio_using_subcommand rebuild" -l model-dir -d 'Model folder in Hugging Face layout' -r -F
complete -c folio -n "__fish_folio_using_subcommand rebuild" -l model -d 'Model by catalogue name (`folio models ls`) or hub id ORG/NAME[@REVISION], fetched on first use (default $FOLIO_MODEL, else [model] name, else all-MiniLM-L6-v2)' -r
complete -c folio -n "__fish_folio_using_subcommand rebuild" -l threads -d 'Encoder threads' -r
complete -c folio -n "__fish_folio_using_subcommand rebuild" -l json -d 'Print results as JSON'
complete -c folio -n "__fish_folio_using_subcommand rebuild" -s v -l verbose -d 'Log progress details to stderr'
complete -c folio -n "__fish_folio_using_subcommand rebuild" -s h -l help -d 'Print help'
complete -c folio -n "__fish_folio_using_subcommand copy" -l from -d 'The embedded store\'s data directory to copy from' -r -F
complete -c folio -n "__fish_folio_using_subcommand copy" -l from-url -d 'The PostgreSQL server to copy from' -r
complete -c folio -n "__fish_folio_using_subcommand copy" -s l -l library -d 'The library to copy' -r
complete -c folio -n "__fish_folio_using_subcommand copy" -l data-dir -d 'Data directory (default $FOLIO_DATA_DIR, else ~/.local/share/folio/data)' -r -F
complete -c folio -n "__fish_folio_using_subcommand copy" -l store-url -d 'A PostgreSQL server to use instead of the data directory (default $FOLIO_STORE_URL, else [store] url)' -r
complete -c folio -n "__fish_folio_using_subcommand copy" -l config -d 'Configuration file (default $FOLIO_CONFIG, else ~/.config/folio/config.toml)' -r -F
complete -c folio -n "__fish_folio_using_subcommand copy" -l backend -d 'Embedding backend: onnx, candle or openai' -r
complete -c folio -n "__fish_folio_using_subcommand copy" -l model-dir -d 'Model folder in Hugging Face layout' -r -F
complete -c folio -n "__fish_folio_using_subcommand copy" -l model -d 'Model by catalogue name (`folio models ls`) or hub id ORG/NAME[@REVISION], fetched on first use (default $FOLIO_MODEL, else [model] name, else all-MiniLM-L6-v2)' -r
complete -c folio -n "__fish_folio_using_subcommand copy" -l threads -d 'Encoder threads' -r
complete -c folio -n "__fish_folio_using_subcommand copy" -l json -d 'Print results as JSON'
complete -c folio -n "__fish_folio_using_subcommand copy" -s v -l verbose -d 'Log progress details to stderr'
complete -c folio -n "__fish_folio_using_subcommand copy" -s h -l help -d 'Print help'
complete -c folio -n "__fish_folio_using_subcommand eval" -l mode -d 'hybrid (BM25 and vectors fused), lexical (BM25) or dense (vectors)' -r -f -a "hybrid\t''
lexical\t''
dense\t''"
complete -c folio -n "__fish_folio_using_subcommand eval" -l fusion -d 'Hybrid fusion: weighted (default) or rrf' -r -f -a "weighted\t''
rrf\t''"
complete -c folio -n "__fish_folio_using_subcommand eval" -l rrf-k -d 'RRF k' -r
complete -c folio -n "__fish_folio_using_subcommand eval" -l lexical-weight -d 'Weight of the lexical ranking (weighted: in [0, 1]; rrf: any >= 0)' -r
complete -c folio -n "__fish_folio_using_subcommand eval" -l dense-weight -d 'Weight of the dense ranking (rrf)' -r
complete -c folio -n "__fish_folio_using_subcommand eval" -l k1 -r
complete -c folio -n "__fish_folio_using_subcommand eval" -l b -r
complete -c folio -n "__fish_folio_using_subcommand eval" -l qrels -r -F
complete -c folio -n "__fish_folio_using_subcommand eval" -l run -d 'Write the ranking as JSON {query_id: {doc_id: score}}' -r -F
complete -c folio -n "__fish_folio_using_subcommand eval" -l library -d 'Scratch library name (default eval.<dir name>)' -r
complete -c folio -n "__fish_folio_using_subcommand eval" -l max-queries -d 'Only the first N judged queries' -r
complete -c folio -n "__fish_folio_using_subcommand eval" -l depth -d 'Candidates each retriever contributes to fusion (default: as an agent\'s search, 300)' -r
complete -c folio -n "__fish_folio_using_subcommand eval" -l data-dir -d 'Data directory (default $FOLIO_DATA_DIR, else ~/.local/share/folio/data)' -r -F
complete -c folio -n "__fish_folio_using_subcommand eval" -l store-url -d 'A PostgreSQL server to use instead of the data directory (default $FOLIO_STORE_URL, else [store] url)' -r
complete -c folio -n "__fish_folio_using_subcommand eval" -l config -d 'Configuration file (default $FOLIO_CONFIG, else ~/.config/folio/config.toml)' -r -F
complete -c folio -n "__fish_folio_using_subcommand eval" -l backend -d 'Embedding backend: onnx, candle or openai' -r
complete -c folio -n "__fish_folio_using_subcommand eval" -l model-dir -d 'Model folder in Hugging Face layout' -r -F
complete -c folio -n "__fish_folio_using_subcommand eval" -l model -d 'Model by catalogue name (`folio models ls`) or hub id ORG/NAME[@REVISION], fetched on first use (default $FOLIO_MODEL, else [model] name, else all-MiniLM-L6-v2)' -r
complete -c folio -n "__fish_folio_using_subcommand eval" -l threads -d 'Encoder threads' -r
complete -c folio -n "__fish_folio_using_subcommand eval" -l rerank -d 'Rerank the best candidates with the configured cross-encoder'
complete -c folio -n "__fish_folio_using_subcommand eval" -l no-rerank -d 'Do not rerank, even where the configuration enables it'
complete -c folio -n "__fish_folio_using_subcommand eval" -l json -d 'Print results as JSON'
complete -c folio -n "__fish_folio_using_subcommand eval" -s v -l verbose -d 'Log progress details to stderr'
complete -c folio -n "__fish_folio_using_subcommand eval" -s h -l help -d 'Print help'
complete -c folio -n "__fish_folio_using_subcommand bench; and not __fish_seen_subcommand_from search encoder help" -l data-dir -d 'Data directory (default $FOLIO_DATA_DIR, else ~/.local/share/folio/data)' -r -F
complete -c folio -n "__fish_folio_using_subcommand bench; and not __fish_seen_subcommand_from search encoder help" -l store-url -d 'A PostgreSQL server to use instead of the data directory (default $FOLIO_STORE_URL, else [store] url)' -r
complete -c folio -n "__fish_folio_using_subcommand bench; and not __fish_seen_subcommand_from search encoder help" -l config -d 'Configuration file (default $FOLIO_CONFIG, else ~/.config/folio/config.toml)' -r -F
complete -c folio -n "__fish_folio_using_subcommand bench; and not __fish_seen_subcommand_from search encoder help" -l backend -d 'Embedding backend: onnx, candle or openai' -r
complete -c folio -n "__fish_folio_using_subcommand bench; and not __fish_seen_subcommand_from search encoder help" -l model-dir -d 'Model folder in Hugging Face layout' -r -F
complete -c folio -n "__fish_folio_using_subcommand bench; and not __fish_seen_subcommand_from search encoder help" -l model -d 'Model by catalogue name (`folio models ls`) or hub id ORG/NAME[@REVISION], fetched on first use (default $FOLIO_MODEL, else [model] name, else all-MiniLM-L6-v2)' -r
complete -c folio -n "__fish_folio_using_subcommand bench; and not __fish_seen_subcommand_from search encoder help" -l threads -d 'Encoder threads' -r
complete -c folio -n "__fish_folio_using_subcommand bench; and not __fish_seen_subcommand_from search encoder help" -l json -d 'Print results as JSON'
complete -c folio -n "__fish_folio_using_subcommand bench; and not __fish_seen_subcommand_from search encoder help" -s v -l verbose -d 'Log progress details to stderr'
complete -c folio -n "__fish_folio_using_subcommand bench; and not __fish_seen_subcommand_from search encoder help" -s h -l help -d 'Print help'
complete -c folio -n "__fish_folio_using_subcommand bench; and not __fish_seen_subcommand_from search encoder help" -f -a "search" -d 'Search latency, get-by-id latency, memory and disk on a synthetic library'
complete -c folio -n "__fish_folio_using_subcommand bench; and not __fish_seen_subcommand_from search encoder help" -f -a "encoder" -d 'Encoder throughput on the first documents of a BEIR corpus.jsonl'
complete -c folio -n "__fish_folio_using_subcommand bench; and not __fish_seen_subcommand_from search encoder help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c folio -n "__fish_folio_using_subcommand bench; and __fish_seen_subcommand_from search" -l chunks -d 'Chunks in the synthetic library' -r
complete -c folio -n "__fish_folio_using_subcommand bench; and __fish_seen_subcommand_from search" -l queries -d 'Timed queries per mode' -r
complete -c folio -n "__fish_folio_using_subcommand bench; and __fish_seen_subcommand_from search" -l only -d 'Only the measurements whose names contain this (e.g. `dense_vector_cached`), to profile one kind of search alone' -r
complete -c folio -n "__fish_folio_using_subcommand bench; and __fish_seen_subcommand_from search" -l data-dir -d 'Data directory (default $FOLIO_DATA_DIR, else ~/.local/share/folio/data)' -r -F
complete -c folio -n "__fish_folio_using_subcommand bench; and __fish_seen_subcommand_from search" -l store-url -d 'A PostgreSQL server to use instead of the data directory (default $FOLIO_STORE_URL, else [store] url)' -r
complete -c folio -n "__fish_folio_using_subcommand bench; and __fish_seen_subcommand_from search" -l config -d 'Configuration file (default $FOLIO_CONFIG, else ~/.config/folio/config.toml)' -r -F
complete -c folio -n "__fish_folio_using_subcommand bench; and __fish_seen_subcommand_from search" -l backend -d 'Embedding backend: onnx, candle or openai' -r
complete -c folio -n "__fish_folio_using_subcommand bench; and __fish_seen_subcommand_from search" -l model-dir -d 'Model folder in Hugging Face layout' -r -F
complete -c folio -n "__fish_folio_using_subcommand bench; and __fish_seen_subcommand_from search" -l model -d 'Model by catalogue name (`folio models ls`) or hub id ORG/NAME[@REVISION], fetched on first use (default $FOLIO_MODEL, else [model] name, else all-MiniLM-L6-v2)' -r
complete -c folio -n "__fish_folio_using_subcommand bench; and __fish_seen_subcommand_from search" -l threads -d 'Encoder threads' -r
complete -c folio -n "__fish_folio_using_subcommand bench; and __fish_seen_subcommand_from search" -l json -d 'Print results as JSON'
complete -c folio -n "__fish_folio_using_subcommand bench; and __fish_seen_subcommand_from search" -s v -l verbose -d 'Log progress details to stderr'
complete -c folio -n "__fish_folio_using_subcommand bench; and __fish_seen_subcommand_from search" -s h -l help -d 'Print help'
complete -c folio -n "__fish_folio_using_subcommand bench; and __fish_seen_subcommand_from encoder" -l docs -r
complete -c folio -n "__fish_folio_using_subcommand bench; and __fish_seen_subcommand_from encoder" -l backends -d 'onnx, candle or both' -r
complete -c folio -n "__fish_folio_using_subcommand bench; and __fish_seen_subcommand_from encoder" -l data-dir -d 'Data directory (default $FOLIO_DATA_DIR, else ~/.local/share/folio/data)' -r -F
complete -c folio -n "__fish_folio_using_subcommand bench; and __fish_seen_subcommand_from encoder" -l store-url -d 'A PostgreSQL server to use instead of the data directory (default $FOLIO_STORE_URL, else [store] url)' -r
complete -c folio -n "__fish_folio_using_subcommand bench; and __fish_seen_subcommand_from encoder" -l config -d 'Configuration file (default $FOLIO_CONFIG, else ~/.config/folio/config.toml)' -r -F
complete -c folio -n "__fish_folio_using_subcommand bench; and __fish_seen_subcommand_from encoder" -l backend -d 'Embedding backend: onnx, candle or openai' -r
complete -c folio -n "__fish_folio_using_subcommand bench; and __fish_seen_subcommand_from encoder" -l model-dir -d 'Model folder in Hugging Face layout' -r -F
complete -c folio -n "__fish_folio_using_subcommand bench; and __fish_seen_subcommand_from encoder" -l model -d 'Model by catalogue name (`folio models ls`) or hub id ORG/NAME[@REVISION], fetched on first use (default $FOLIO_MODEL, else [model] name, else all-MiniLM-L6-v2)' -r
complete -c folio -n "__fish_folio_using_subcommand bench; and __fish_seen_subcommand_from encoder" -l threads -d 'Encoder threads' -r
complete -c folio -n "__fish_folio_using_subcommand bench; and __fish_seen_subcommand_from encoder" -l json -d 'Print results as JSON'
complete -c folio -n "__fish_folio_using_subcommand bench; and __fish_seen_subcommand_from encoder" -s v -l verbose -d 'Log progress details to stderr'
complete -c folio -n "__fish_folio_using_subcommand bench; and __fish_seen_subcommand_from encoder" -s h -l help -d 'Print help'
complete -c folio -n "__fish_folio_using_subcommand bench; and __fish_seen_subcommand_from help" -f -a "search" -d 'Search latency, get-by-id latency, memory and disk on a synthetic library'
complete -c folio -n "__fish_folio_using_subcommand bench; and __fish_seen_subcommand_from help" -f -a "encoder" -d 'Encoder throughput on the first documents of a BEIR corpus.jsonl'
complete -c folio -n "__fish_folio_using_subcommand bench; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c folio -n "__fish_folio_using_subcommand serve" -l http -d 'Serve MCP over streamable HTTP at ADDR (e.g. 127.0.0.1:7070), at /mcp' -r
complete -c folio -n "__fish_folio_using_subcommand serve" -l toolsets -d 'Toolsets to expose, comma-separated: native, citeloom, bmcis, mcpvectordb, hansard' -r
complete -c folio -n "__fish_folio_using_subcommand serve" -l token -d 'Bearer token HTTP clients must send' -r
complete -c folio -n "__fish_folio_using_subcommand serve" -l auth -d 'How HTTP callers prove who they are: none, token (the one shared --token), keys (a key each, from `folio keys create`) or oauth (an access token of the team\'s identity provider, --issuer); scopes and libraries apply to keys and oauth. Default: token when one is given, else none' -r -f -a "none\t''
token\t''
keys\t''
oauth\t''"
complete -c folio -n "__fish_folio_using_subcommand serve" -l issuer -d 'The identity provider whose access tokens --auth oauth accepts (its issuer identifier, e.g. https://idp.example.org/realms/team)' -r
complete -c folio -n "__fish_folio_using_subcommand serve" -l resource -d 'This server\'s resource identifier, which tokens must name as their audience (e.g. https://folio.example.org/mcp)' -r
complete -c folio -n "__fish_folio_using_subcommand serve" -l app-client-id -d 'The client id the web app signs people in with at the --issuer (authorization code flow with PKCE), registered there with the redirect URI <origin of --resource>/app/callback. Without it the web app of an --auth oauth server cannot sign anyone in' -r
complete -c folio -n "__fish_folio_using_subcommand serve" -l app-client-secret -d 'That client\'s secret, for a confidential client (best given in the environment, where `ps` does not show it)' -r
complete -c folio -n "__fish_folio_using_subcommand serve" -l audit-log -d 'Append one JSON line per call to this file (`-`: stderr): time, key name, transport, tool or route, library, outcome, duration, correlation id; never queries or document text' -r -F
complete -c folio -n "__fish_folio_using_subcommand serve" -l rate -d 'Calls a key may make when it names no rate of its own: 600/min, 10/s (default: unlimited)' -r
complete -c folio -n "__fish_folio_using_subcommand serve" -l ingest-rate -d 'Bytes of sources each key or identity may ingest: 500MB/h, 2GiB/day (default: unlimited). Over it, ingest tools answer RATE_LIMITED with the wait' -r
complete -c folio -n "__fish_folio_using_subcommand serve" -l metrics-addr -d 'Also serve /metrics, without credentials, on this address (e.g. 127.0.0.1:9100, for a Prometheus scraper on a private interface); /metrics on the main address stays behind --auth' -r
complete -c folio -n "__fish_folio_using_subcommand serve" -l allowed-host -d 'Another Host name the HTTP server answers to (repeatable)' -r
complete -c folio -n "__fish_folio_using_subcommand serve" -l allowed-origin -d 'Another browser Origin the HTTP server accepts (repeatable)' -r
complete -c folio -n "__fish_folio_using_subcommand serve" -l tools-page-size -d 'Tools per tools/list page' -r
complete -c folio -n "__fish_folio_using_subcommand serve" -l server-name -d 'The server name given to clients at initialisation (default: the seed\'s name when one compatibility toolset is served, else folio)' -r
complete -c folio -n "__fish_folio_using_subcommand serve" -l server-version -d 'The server version given to clients at initialisation' -r
complete -c folio -n "__fish_folio_using_subcommand serve" -l watch -d 'Keep a folder in sync with a library while serving: FOLDER=LIBRARY (repeatable; `[[watch]]` in the configuration adds more)' -r
complete -c folio -n "__fish_folio_using_subcommand serve" -l data-dir -d 'Data directory (default $FOLIO_DATA_DIR, else ~/.local/share/folio/data)' -r -F
complete -c folio -n "__fish_folio_using_subcommand serve" -l store-url -d 'A PostgreSQL server to use instead of the data directory (default $FOLIO_STORE_URL, else [store] url)' -r
complete -c folio -n "__fish_folio_using_subcommand serve" -l config -d 'Configuration file (default $FOLIO_CONFIG, else ~/.config/folio/config.toml)' -r -F
complete -c folio -n "__fish_folio_using_subcommand serve" -l backend -d 'Embedding backend: onnx, candle or openai' -r
complete -c folio -n "__fish_folio_using_subcommand serve" -l model-dir -d 'Model folder in Hugging Face layout' -r -F
complete -c folio -n "__fish_folio_using_subcommand serve" -l model -d 'Model by catalogue name (`folio models ls`) or hub id ORG/NAME[@REVISION], fetched on first use (default $FOLIO_MODEL, else [model] name, else all-MiniLM-L6-v2)' -r
complete -c folio -n "__fish_folio_using_subcommand serve" -l threads -d 'Encoder threads' -r
complete -c folio -n "__fish_folio_using_subcommand serve" -l stdio -d 'Serve MCP over stdin/stdout (the default)'
complete -c folio -n "__fish_folio_using_subcommand serve" -l read-only -d 'Expose only tools that do not write'
complete -c folio -n "__fish_folio_using_subcommand serve" -l allow-private-urls -d 'Allow ingesting URLs on private networks'
complete -c folio -n "__fish_folio_using_subcommand serve" -l json -d 'Print results as JSON'
complete -c folio -n "__fish_folio_using_subcommand serve" -s v -l verbose -d 'Log progress details to stderr'
complete -c folio -n "__fish_folio_using_subcommand serve" -s h -l help -d 'Print help'
complete -c folio -n "__fish_folio_using_subcommand schema" -l data-dir -d 'Data directory (default $FOLIO_DATA_DIR, else ~/.local/share/folio/data)' -r -F
complete -c folio -n "__fish_folio_using_subcommand schema" -l store-url -d 'A PostgreSQL server to use instead of the data directory (default $FOLIO_STORE_URL, else [store] url)' -r
complete -c folio -n "__fish_folio_using_subcommand schema" -l config -d 'Configuration file (default $FOLIO_CONFIG, else ~/.config/folio/config.toml)' -r -F
complete -c folio -n "__fish_folio_using_subcommand schema" -l backend -d 'Embedding backend: onnx, candle or openai' -r
complete -c folio -n "__fish_folio_using_subcommand schema" -l model-dir -d 'Model folder in Hugging Face layout' -r -F
complete -c folio -n "__fish_folio_using_subcommand schema" -l model -d 'Model by catalogue name (`folio models ls`) or hub id ORG/NAME[@REVISION], fetched on first use (default $FOLIO_MODEL, else [model] name, else all-MiniLM-L6-v2)' -r
complete -c folio -n "__fish_folio_using_subcommand schema" -l threads -d 'Encoder threads' -r
complete -c folio -n "__fish_folio_using_subcommand schema" -l json -d 'Print results as JSON'
complete -c folio -n "__fish_folio_using_subcommand schema" -s v -l verbose -d 'Log progress details to stderr'
complete -c folio -n "__fish_folio_using_subcommand schema" -s h -l help -d 'Print help'
complete -c folio -n "__fish_folio_using_subcommand facets" -s l -l library -r
complete -c folio -n "__fish_folio_using_subcommand facets" -l by -d 'Group by this field (repeatable; a tags field gives a group per tag)' -r
complete -c folio -n "__fish_folio_using_subcommand facets" -l stats -d 'Summarise this field per group: min, max, sum (repeatable)' -r
complete -c folio -n "__fish_folio_using_subcommand facets" -l top -d 'The most frequent values of a tags field per group: FIELD or FIELD:N' -r
complete -c folio -n "__fish_folio_using_subcommand facets" -l filter -d 'Filter as JSON, e.g. \'{"chamber": "Senate", "date": {"gte": "2024-01-01"}}\'' -r
complete -c folio -n "__fish_folio_using_subcommand facets" -l min-count -r
complete -c folio -n "__fish_folio_using_subcommand facets" -l limit -r
complete -c folio -n "__fish_folio_using_subcommand facets" -l data-dir -d 'Data directory (default $FOLIO_DATA_DIR, else ~/.local/share/folio/data)' -r -F
complete -c folio -n "__fish_folio_using_subcommand facets" -l store-url -d 'A PostgreSQL server to use instead of the data directory (default $FOLIO_STORE_URL, else [store] url)' -r
complete -c folio -n "__fish_folio_using_subcommand facets" -l config -d 'Configuration file (default $FOLIO_CONFIG, else ~/.config/folio/config.toml)' -r -F
complete -c folio -n "__fish_folio_using_subcommand facets" -l backend -d 'Embedding backend: onnx, candle or openai' -r
complete -c folio -n "__fish_folio_using_subcommand facets" -l model-dir -d 'Model folder in Hugging Face layout' -r -F
complete -c folio -n "__fish_folio_using_subcommand facets" -l model -d 'Model by catalogue name (`folio models ls`) or hub id ORG/NAME[@REVISION], fetched on first use (default $FOLIO_MODEL, else [model] name, else all-MiniLM-L6-v2)' -r
complete -c folio -n "__fish_folio_using_subcommand facets" -l threads -d 'Encoder threads' -r
complete -c folio -n "__fish_folio_using_subcommand facets" -l json -d 'Print results as JSON'
complete -c folio -n "__fish_folio_using_subcommand facets" -s v -l verbose -d 'Log progress details to stderr'
complete -c folio -n "__fish_folio_using_subcommand facets" -s h -l help -d 'Print help'
complete -c folio -n "__fish_folio_using_subcommand references" -s l -l library -r
complete -c folio -n "__fish_folio_using_subcommand references" -l data-dir -d 'Data directory (default $FOLIO_DATA_DIR, else ~/.local/share/folio/data)' -r -F
complete -c folio -n "__fish_folio_using_subcommand references" -l store-url -d 'A PostgreSQL server to use instead of the data directory (default $FOLIO_STORE_URL, else [store] url)' -r
complete -c folio -n "__fish_folio_using_subcommand references" -l config -d 'Configuration file (default $FOLIO_CONFIG, else ~/.config/folio/config.toml)' -r -F
complete -c folio -n "__fish_folio_using_subcommand references" -l backend -d 'Embedding backend: onnx, candle or openai' -r
complete -c folio -n "__fish_folio_using_subcommand references" -l model-dir -d 'Model folder in Hugging Face layout' -r -F
complete -c folio -n "__fish_folio_using_subcommand references" -l model -d 'Model by catalogue name (`folio models ls`) or hub id ORG/NAME[@REVISION], fetched on first use (default $FOLIO_MODEL, else [model] name, else all-MiniLM-L6-v2)' -r
complete -c folio -n "__fish_folio_using_subcommand references" -l threads -d 'Encoder threads' -r
complete -c folio -n "__fish_folio_using_subcommand references" -l json -d 'Print results as JSON'
complete -c folio -n "__fish_folio_using_subcommand references" -s v -l verbose -d 'Log progress details to stderr'
complete -c folio -n "__fish_folio_using_subcommand references" -s h -l help -d 'Print help'
complete -c folio -n "__fish_folio_using_subcommand quote" -s l -l library -d 'Libraries to look in (repeatable; default all)' -r
complete -c folio -n "__fish_folio_using_subcommand quote" -l document -d 'Look only in this document' -r
complete -c folio -n "__fish_folio_using_subcommand quote" -l min-score -d 'Least similarity for an approximate match' -r
complete -c folio -n "__fish_folio_using_subcommand quote" -l limit -r
complete -c folio -n "__fish_folio_using_subcommand quote" -l data-dir -d 'Data directory (default $FOLIO_DATA_DIR, else ~/.local/share/folio/data)' -r -F
complete -c folio -n "__fish_folio_using_subcommand quote" -l store-url -d 'A PostgreSQL server to use instead of the data directory (default $FOLIO_STORE_URL, else [store] url)' -r
complete -c folio -n "__fish_folio_using_subcommand quote" -l config -d 'Configuration file (default $FOLIO_CONFIG, else ~/.config/folio/config.toml)' -r -F
complete -c folio -n "__fish_folio_using_subcommand quote" -l backend -d 'Embedding backend: onnx, candle or openai' -r
complete -c folio -n "__fish_folio_using_subcommand quote" -l model-dir -d 'Model folder in Hugging Face layout' -r -F
complete -c folio -n "__fish_folio_using_subcommand quote" -l model -d 'Model by catalogue name (`folio models ls`) or hub id ORG/NAME[@REVISION], fetched on first use (default $FOLIO_MODEL, else [model] name, else all-MiniLM-L6-v2)' -r
complete -c folio -n "__fish_folio_using_subcommand quote" -l threads -d 'Encoder threads' -r
complete -c folio -n "__fish_folio_using_subcommand quote" -l json -d 'Print results as JSON'
complete -c folio -n "__fish_folio_using_subcommand quote" -s v -l verbose -d 'Log progress details to stderr'
complete -c folio -n "__fish_folio_using_subcommand quote" -s h -l help -d 'Print help'
complete -c folio -n "__fish_folio_using_subcommand keys; and not __fish_seen_subcommand_from create ls revoke help" -l data-dir -d 'Data directory (default $FOLIO_DATA_DIR, else ~/.local/share/folio/data)' -r -F
complete -c folio -n "__fish_folio_using_subcommand keys; and not __fish_seen_subcommand_from create ls revoke help" -l store-url -d 'A PostgreSQL server to use instead of the data directory (default $FOLIO_STORE_URL, else [store] url)' -r
complete -c folio -n "__fish_folio_using_subcommand keys; and not __fish_seen_subcommand_from create ls revoke help" -l config -d 'Configuration file (default $FOLIO_CONFIG, else ~/.config/folio/config.toml)' -r -F
complete -c folio -n "__fish_folio_using_subcommand keys; and not __fish_seen_subcommand_from create ls revoke help" -l backend -d 'Embedding backend: onnx, candle or openai' -r
complete -c folio -n "__fish_folio_using_subcommand keys; and not __fish_seen_subcommand_from create ls revoke help" -l model-dir -d 'Model folder in Hugging Face layout' -r -F
complete -c folio -n "__fish_folio_using_subcommand keys; and not __fish_seen_subcommand_from create ls revoke help" -l model -d 'Model by catalogue name (`folio models ls`) or hub id ORG/NAME[@REVISION], fetched on first use (default $FOLIO_MODEL, else [model] name, else all-MiniLM-L6-v2)' -r
complete -c folio -n "__fish_folio_using_subcommand keys; and not __fish_seen_subcommand_from create ls revoke help" -l threads -d 'Encoder threads' -r
complete -c folio -n "__fish_folio_using_subcommand keys; and not __fish_seen_subcommand_from create ls revoke help" -l json -d 'Print results as JSON'
complete -c folio -n "__fish_folio_using_subcommand keys; and not __fish_seen_subcommand_from create ls revoke help" -s v -l verbose -d 'Log progress details to stderr'
complete -c folio -n "__fish_folio_using_subcommand keys; and not __fish_seen_subcommand_from create ls revoke help" -s h -l help -d 'Print help'
complete -c folio -n "__fish_folio_using_subcommand keys; and not __fish_seen_subcommand_from create ls revoke help" -f -a "create" -d 'Create a key and print it (once: only its hash is kept)'
complete -c folio -n "__fish_folio_using_subcommand keys; and not __fish_seen_subcommand_from create ls revoke help" -f -a "ls" -d 'List the keys: names, scopes, libraries, expiry, rate, last use'
complete -c folio -n "__fish_folio_using_subcommand keys; and not __fish_seen_subcommand_from create ls revoke help" -f -a "revoke" -d 'Revoke a key: every server refuses it within seconds'
complete -c folio -n "__fish_folio_using_subcommand keys; and not __fish_seen_subcommand_from create ls revoke help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c folio -n "__fish_folio_using_subcommand keys; and __fish_seen_subcommand_from create" -l scope -d 'Scopes, comma-separated: search (reads), ingest (writes in its libraries), admin (delete libraries, schemas, keys)' -r
complete -c folio -n "__fish_folio_using_subcommand keys; and __fish_seen_subcommand_from create" -l libraries -d 'Libraries it may touch, comma-separated (default: every library)' -r
complete -c folio -n "__fish_folio_using_subcommand keys; and __fish_seen_subcommand_from create" -l expires -d 'Lifetime: 90d, 12h, 30m (default: never expires)' -r
complete -c folio -n "__fish_folio_using_subcommand keys; and __fish_seen_subcommand_from create" -l rate -d 'Calls it may make: 60/min, 2/s, 1000/h (default: the server\'s)' -r
complete -c folio -n "__fish_folio_using_subcommand keys; and __fish_seen_subcommand_from create" -l data-dir -d 'Data directory (default $FOLIO_DATA_DIR, else ~/.local/share/folio/data)' -r -F
complete -c folio -n "__fish_folio_using_subcommand keys; and __fish_seen_subcommand_from create" -l store-url -d 'A PostgreSQL server to use instead of the data directory (default $FOLIO_STORE_URL, else [store] url)' -r
complete -c folio -n "__fish_folio_using_subcommand keys; and __fish_seen_subcommand_from create" -l config -d 'Configuration file (default $FOLIO_CONFIG, else ~/.config/folio/config.toml)' -r -F
complete -c folio -n "__fish_folio_using_subcommand keys; and __fish_seen_subcommand_from create" -l backend -d 'Embedding backend: onnx, candle or openai' -r
complete -c folio -n "__fish_folio_using_subcommand keys; and __fish_seen_subcommand_from create" -l model-dir -d 'Model folder in Hugging Face layout' -r -F
complete -c folio -n "__fish_folio_using_subcommand keys; and __fish_seen_subcommand_from create" -l model -d 'Model by catalogue name (`folio models ls`) or hub id ORG/NAME[@REVISION], fetched on first use (default $FOLIO_MODEL, else [model] name, else all-MiniLM-L6-v2)' -r
complete -c folio -n "__fish_folio_using_subcommand keys; and __fish_seen_subcommand_from create" -l threads -d 'Encoder threads' -r
complete -c folio -n "__fish_folio_using_subcommand keys; and __fish_seen_subcommand_from create" -l json -d 'Print results as JSON'
complete -c folio -n "__fish_folio_using_subcommand keys; and __fish_seen_subcommand_from create" -s v -l verbose -d 'Log progress details to stderr'
complete -c folio -n "__fish_folio_using_subcommand keys; and __fish_seen_subcommand_from create" -s h -l help -d 'Print help'
complete -c folio -n "__fish_folio_using_subcommand keys; and __fish_seen_subcommand_from ls" -l data-dir -d 'Data directory (default $FOLIO_DATA_DIR, else ~/.local/share/folio/data)' -r -F
complete -c folio -n "__fish_folio_using_subcommand keys; and __fish_seen_subcommand_from ls" -l store-url -d 'A PostgreSQL server to use instead of the data directory (default $FOLIO_STORE_URL, else [store] url)' -r
complete -c folio -n "__fish_folio_using_subcommand keys; and __fish_seen_subcommand_from ls" -l config -d 'Configuration file (default $FOLIO_CONFIG, else ~/.config/folio/config.toml)' -r -F
complete -c folio -n "__fish_folio_using_subcommand keys; and __fish_seen_subcommand_from ls" -l backend -d 'Embedding backend: onnx, candle or openai' -r
complete -c folio -n "__fish_folio_using_subcommand keys; and __fish_seen_subcommand_from ls" -l model-dir -d 'Model folder in Hugging Face layout' -r -F
complete -c folio -n "__fish_folio_using_subcommand keys; and __fish_seen_subcommand_from ls" -l model -d 'Model by catalogue name (`folio models ls`) or hub id ORG/NAME[@REVISION], fetched on first use (default $FOLIO_MODEL, else [model] name, else all-MiniLM-L6-v2)' -r
complete -c folio -n "__fish_folio_using_subcommand keys; and __fish_seen_subcommand_from ls" -l threads -d 'Encoder threads' -r
complete -c folio -n "__fish_folio_using_subcommand keys; and __fish_seen_subcommand_from ls" -l json -d 'Print results as JSON'
complete -c folio -n "__fish_folio_using_subcommand keys; and __fish_seen_subcommand_from ls" -s v -l verbose -d 'Log progress details to stderr'
complete -c folio -n "__fish_folio_using_subcommand keys; and __fish_seen_subcommand_from ls" -s h -l help -d 'Print help'
complete -c folio -n "__fish_folio_using_subcommand keys; and __fish_seen_subcommand_from revoke" -l data-dir -d 'Data directory (default $FOLIO_DATA_DIR, else ~/.local/share/folio/data)' -r -F
complete -c folio -n "__fish_folio_using_subcommand keys; and __fish_seen_subcommand_from revoke" -l store-url -d 'A PostgreSQL server to use instead of the data directory (default $FOLIO_STORE_URL, else [store] url)' -r
complete -c folio -n "__fish_folio_using_subcommand keys; and __fish_seen_subcommand_from revoke" -l config -d 'Configuration file (default $FOLIO_CONFIG, else ~/.config/folio/config.toml)' -r -F
complete -c folio -n "__fish_folio_using_subcommand keys; and __fish_seen_subcommand_from revoke" -l backend -d 'Embedding backend: onnx, candle or openai' -r
complete -c folio -n "__fish_folio_using_subcommand keys; and __fish_seen_subcommand_from revoke" -l model-dir -d 'Model folder in Hugging Face layout' -r -F
complete -c folio -n "__fish_folio_using_subcommand keys; and __fish_seen_subcommand_from revoke" -l model -d 'Model by catalogue name (`folio models ls`) or hub id ORG/NAME[@REVISION], fetched on first use (default $FOLIO_MODEL, else [model] name, else all-MiniLM-L6-v2)' -r
complete -c folio -n "__fish_folio_using_subcommand keys; and __fish_seen_subcommand_from revoke" -l threads -d 'Encoder threads' -r
complete -c folio -n "__fish_folio_using_subcommand keys; and __fish_seen_subcommand_from revoke" -l json -d 'Print results as JSON'
complete -c folio -n "__fish_folio_using_subcommand keys; and __fish_seen_subcommand_from revoke" -s v -l verbose -d 'Log progress details to stderr'
complete -c folio -n "__fish_folio_using_subcommand keys; and __fish_seen_subcommand_from revoke" -s h -l help -d 'Print help'
complete -c folio -n "__fish_folio_using_subcommand keys; and __fish_seen_subcommand_from help" -f -a "create" -d 'Create a key and print it (once: only its hash is kept)'
complete -c folio -n "__fish_folio_using_subcommand keys; and __fish_seen_subcommand_from help" -f -a "ls" -d 'List the keys: names, scopes, libraries, expiry, rate, last use'
complete -c folio -n "__fish_folio_using_subcommand keys; and __fish_seen_subcommand_from help" -f -a "revoke" -d 'Revoke a key: every server refuses it within seconds'
complete -c folio -n "__fish_folio_using_subcommand keys; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c folio -n "__fish_folio_using_subcommand entities; and not __fish_seen_subcommand_from import relink help" -l type -d 'Only entities of this type (organization, person, name, ...)' -r
complete -c folio -n "__fish_folio_using_subcommand entities; and not __fish_seen_subcommand_from import relink help" -l prefix -d 'Only entities whose name starts with this' -r
complete -c folio -n "__fish_folio_using_subcommand entities; and not __fish_seen_subcommand_from import relink help" -l top -d 'How many, most mentioned first' -r
complete -c folio -n "__fish_folio_using_subcommand entities; and not __fish_seen_subcommand_from import relink help" -l data-dir -d 'Data directory (default $FOLIO_DATA_DIR, else ~/.local/share/folio/data)' -r -F
complete -c folio -n "__fish_folio_using_subcommand entities; and not __fish_seen_subcommand_from import relink help" -l store-url -d 'A PostgreSQL server to use instead of the data directory (default $FOLIO_STORE_URL, else [store] url)' -r
complete -c folio -n "__fish_folio_using_subcommand entities; and not __fish_seen_subcommand_from import relink help" -l config -d 'Configuration file (default $FOLIO_CONFIG, else ~/.config/folio/config.toml)' -r -F
complete -c folio -n "__fish_folio_using_subcommand entities; and not __fish_seen_subcommand_from import relink help" -l backend -d 'Embedding backend: onnx, candle or openai' -r
complete -c folio -n "__fish_folio_using_subcommand entities; and not __fish_seen_subcommand_from import relink help" -l model-dir -d 'Model folder in Hugging Face layout' -r -F
complete -c folio -n "__fish_folio_using_subcommand entities; and not __fish_seen_subcommand_from import relink help" -l model -d 'Model by catalogue name (`folio models ls`) or hub id ORG/NAME[@REVISION], fetched on first use (default $FOLIO_MODEL, else [model] name, else all-MiniLM-L6-v2)' -r
complete -c folio -n "__fish_folio_using_subcommand entities; and not __fish_seen_subcommand_from import relink help" -l threads -d 'Encoder threads' -r
complete -c folio -n "__fish_folio_using_subcommand entities; and not __fish_seen_subcommand_from import relink help" -l json -d 'Print results as JSON'
complete -c folio -n "__fish_folio_using_subcommand entities; and not __fish_seen_subcommand_from import relink help" -s v -l verbose -d 'Log progress details to stderr'
complete -c folio -n "__fish_folio_using_subcommand entities; and not __fish_seen_subcommand_from import relink help" -s h -l help -d 'Print help'
complete -c folio -n "__fish_folio_using_subcommand entities; and not __fish_seen_subcommand_from import relink help" -a "import" -d 'Declare entities from a CSV (name, type, aliases separated by `|`, relations as `relation: target|...`, other columns attributes) or JSON Lines file, then relink the library\'s documents. A file with a bad line is refused whole, every bad line named'
complete -c folio -n "__fish_folio_using_subcommand entities; and not __fish_seen_subcommand_from import relink help" -a "relink" -d 'Read the library\'s stored documents again for the entities they mention (no embedding): builds the graph of a library ingested before entities existed. Safe to interrupt and run again'
complete -c folio -n "__fish_folio_using_subcommand entities; and not __fish_seen_subcommand_from import relink help" -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c folio -n "__fish_folio_using_subcommand entities; and __fish_seen_subcommand_from import" -l library -r
complete -c folio -n "__fish_folio_using_subcommand entities; and __fish_seen_subcommand_from import" -l data-dir -d 'Data directory (default $FOLIO_DATA_DIR, else ~/.local/share/folio/data)' -r -F
complete -c folio -n "__fish_folio_using_subcommand entities; and __fish_seen_subcommand_from import" -l store-url -d 'A PostgreSQL server to use instead of the data directory (default $FOLIO_STORE_URL, else [store] url)' -r
complete -c folio -n "__fish_folio_using_subcommand entities; and __fish_seen_subcommand_from import" -l config -d 'Configuration file (default $FOLIO_CONFIG, else ~/.config/folio/config.toml)' -r -F
complete -c folio -n "__fish_folio_using_subcommand entities; and __fish_seen_subcommand_from import" -l backend -d 'Embedding backend: onnx, candle or openai' -r
complete -c folio -n "__fish_folio_using_subcommand entities; and __fish_seen_subcommand_from import" -l model-dir -d 'Model folder in Hugging Face layout' -r -F
complete -c folio -n "__fish_folio_using_subcommand entities; and __fish_seen_subcommand_from import" -l model -d 'Model by catalogue name (`folio models ls`) or hub id ORG/NAME[@REVISION], fetched on first use (default $FOLIO_MODEL, else [model] name, else all-MiniLM-L6-v2)' -r
complete -c folio -n "__fish_folio_using_subcommand entities; and __fish_seen_subcommand_from import" -l threads -d 'Encoder threads' -r
complete -c folio -n "__fish_folio_using_subcommand entities; and __fish_seen_subcommand_from import" -l merge -d 'Keep the entities declared before (one of the same name is replaced); by default the file replaces them'
complete -c folio -n "__fish_folio_using_subcommand entities; and __fish_seen_subcommand_from import" -l json -d 'Print results as JSON'
complete -c folio -n "__fish_folio_using_subcommand entities; and __fish_seen_subcommand_from import" -s v -l verbose -d 'Log progress details to stderr'
complete -c folio -n "__fish_folio_using_subcommand entities; and __fish_seen_subcommand_from import" -s h -l help -d 'Print help'
complete -c folio -n "__fish_folio_using_subcommand entities; and __fish_seen_subcommand_from relink" -l data-dir -d 'Data directory (default $FOLIO_DATA_DIR, else ~/.local/share/folio/data)' -r -F
complete -c folio -n "__fish_folio_using_subcommand entities; and __fish_seen_subcommand_from relink" -l store-url -d 'A PostgreSQL server to use instead of the data directory (default $FOLIO_STORE_URL, else [store] url)' -r
complete -c folio -n "__fish_folio_using_subcommand entities; and __fish_seen_subcommand_from relink" -l config -d 'Configuration file (default $FOLIO_CONFIG, else ~/.config/folio/config.toml)' -r -F
complete -c folio -n "__fish_folio_using_subcommand entities; and __fish_seen_subcommand_from relink" -l backend -d 'Embedding backend: onnx, candle or openai' -r
complete -c folio -n "__fish_folio_using_subcommand entities; and __fish_seen_subcommand_from relink" -l model-dir -d 'Model folder in Hugging Face layout' -r -F
complete -c folio -n "__fish_folio_using_subcommand entities; and __fish_seen_subcommand_from relink" -l model -d 'Model by catalogue name (`folio models ls`) or hub id ORG/NAME[@REVISION], fetched on first use (default $FOLIO_MODEL, else [model] name, else all-MiniLM-L6-v2)' -r
complete -c folio -n "__fish_folio_using_subcommand entities; and __fish_seen_subcommand_from relink" -l threads -d 'Encoder threads' -r
complete -c folio -n "__fish_folio_using_subcommand entities; and __fish_seen_subcommand_from relink" -l json -d 'Print results as JSON'
complete -c folio -n "__fish_folio_using_subcommand entities; and __fish_seen_subcommand_from relink" -s v -l verbose -d 'Log progress details to stderr'
complete -c folio -n "__fish_folio_using_subcommand entities; and __fish_seen_subcommand_from relink" -s h -l help -d 'Print help'
complete -c folio -n "__fish_folio_using_subcommand entities; and __fish_seen_subcommand_from help" -f -a "import" -d 'Declare entities from a CSV (name, type, aliases separated by `|`, relations as `relation: target|...`, other columns attributes) or JSON Lines file, then relink the library\'s documents. A file with a bad line is refused whole, every bad line named'
complete -c folio -n "__fish_folio_using_subcommand entities; and __fish_seen_subcommand_from help" -f -a "relink" -d 'Read the library\'s stored documents again for the entities they mention (no embedding): builds the graph of a library ingested before entities existed. Safe to interrupt and run again'
complete -c folio -n "__fish_folio_using_subcommand entities; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c folio -n "__fish_folio_using_subcommand entity" -l data-dir -d 'Data directory (default $FOLIO_DATA_DIR, else ~/.local/share/folio/data)' -r -F
complete -c folio -n "__fish_folio_using_subcommand entity" -l store-url -d 'A PostgreSQL server to use instead of the data directory (default $FOLIO_STORE_URL, else [store] url)' -r
complete -c folio -n "__fish_folio_using_subcommand entity" -l config -d 'Configuration file (default $FOLIO_CONFIG, else ~/.config/folio/config.toml)' -r -F
complete -c folio -n "__fish_folio_using_subcommand entity" -l backend -d 'Embedding backend: onnx, candle or openai' -r
complete -c folio -n "__fish_folio_using_subcommand entity" -l model-dir -d 'Model folder in Hugging Face layout' -r -F
complete -c folio -n "__fish_folio_using_subcommand entity" -l model -d 'Model by catalogue name (`folio models ls`) or hub id ORG/NAME[@REVISION], fetched on first use (default $FOLIO_MODEL, else [model] name, else all-MiniLM-L6-v2)' -r
complete -c folio -n "__fish_folio_using_subcommand entity" -l threads -d 'Encoder threads' -r
complete -c folio -n "__fish_folio_using_subcommand entity" -l json -d 'Print results as JSON'
complete -c folio -n "__fish_folio_using_subcommand entity" -s v -l verbose -d 'Log progress details to stderr'
complete -c folio -n "__fish_folio_using_subcommand entity" -s h -l help -d 'Print help'
complete -c folio -n "__fish_folio_using_subcommand sync" -s l -l library -r
complete -c folio -n "__fish_folio_using_subcommand sync" -l exclude -d 'Leave out files matching this glob (gitignore syntax, relative to the folder; repeatable), beyond .gitignore, .ignore, .folioignore and hidden files' -r
complete -c folio -n "__fish_folio_using_subcommand sync" -l rescan-secs -d 'With --watch: a full pass at least this often, in seconds (for network mounts that report no changes)' -r
complete -c folio -n "__fish_folio_using_subcommand sync" -l data-dir -d 'Data directory (default $FOLIO_DATA_DIR, else ~/.local/share/folio/data)' -r -F
complete -c folio -n "__fish_folio_using_subcommand sync" -l store-url -d 'A PostgreSQL server to use instead of the data directory (default $FOLIO_STORE_URL, else [store] url)' -r
complete -c folio -n "__fish_folio_using_subcommand sync" -l config -d 'Configuration file (default $FOLIO_CONFIG, else ~/.config/folio/config.toml)' -r -F
complete -c folio -n "__fish_folio_using_subcommand sync" -l backend -d 'Embedding backend: onnx, candle or openai' -r
complete -c folio -n "__fish_folio_using_subcommand sync" -l model-dir -d 'Model folder in Hugging Face layout' -r -F
complete -c folio -n "__fish_folio_using_subcommand sync" -l model -d 'Model by catalogue name (`folio models ls`) or hub id ORG/NAME[@REVISION], fetched on first use (default $FOLIO_MODEL, else [model] name, else all-MiniLM-L6-v2)' -r
complete -c folio -n "__fish_folio_using_subcommand sync" -l threads -d 'Encoder threads' -r
complete -c folio -n "__fish_folio_using_subcommand sync" -l dry-run -d 'Say what a pass would change; change nothing'
complete -c folio -n "__fish_folio_using_subcommand sync" -l watch -d 'After the pass, follow the folder\'s changes until interrupted'
complete -c folio -n "__fish_folio_using_subcommand sync" -l archives -d 'Read ZIP and TAR archives, each member a document under the archive\'s path (left out by default, as images are)'
complete -c folio -n "__fish_folio_using_subcommand sync" -l json -d 'Print results as JSON'
complete -c folio -n "__fish_folio_using_subcommand sync" -s v -l verbose -d 'Log progress details to stderr'
complete -c folio -n "__fish_folio_using_subcommand sync" -s h -l help -d 'Print help'
complete -c folio -n "__fish_folio_using_subcommand models; and not __fish_seen_subcommand_from ls pull path help" -l data-dir -d 'Data directory (default $FOLIO_DATA_DIR, else ~/.local/share/folio/data)' -r -F
complete -c folio -n "__fish_folio_using_subcommand models; and not __fish_seen_subcommand_from ls pull path help" -l store-url -d 'A PostgreSQL server to use instead of the data directory (default $FOLIO_STORE_URL, else [store] url)' -r
complete -c folio -n "__fish_folio_using_subcommand models; and not __fish_seen_subcommand_from ls pull path help" -l config -d 'Configuration file (default $FOLIO_CONFIG, else ~/.config/folio/config.toml)' -r -F
complete -c folio -n "__fish_folio_using_subcommand models; and not __fish_seen_subcommand_from ls pull path help" -l backend -d 'Embedding backend: onnx, candle or openai' -r
complete -c folio -n "__fish_folio_using_subcommand models; and not __fish_seen_subcommand_from ls pull path help" -l model-dir -d 'Model folder in Hugging Face layout' -r -F
complete -c folio -n "__fish_folio_using_subcommand models; and not __fish_seen_subcommand_from ls pull path help" -l model -d 'Model by catalogue name (`folio models ls`) or hub id ORG/NAME[@REVISION], fetched on first use (default $FOLIO_MODEL, else [model] name, else all-MiniLM-L6-v2)' -r
complete -c folio -n "__fish_folio_using_subcommand models; and not __fish_seen_subcommand_from ls pull path help" -l threads -d 'Encoder threads' -r
complete -c folio -n "__fish_folio_using_subcommand models; and not __fish_seen_subcommand_from ls pull path help" -l json -d 'Print results as JSON'
complete -c folio -n "__fish_folio_using_subcommand models; and not __fish_seen_subcommand_from ls pull path help" -s v -l verbose -d 'Log progress details to stderr'
complete -c folio -n "__fish_folio_using_subcommand models; and not __fish_seen_subcommand_from ls pull path help" -s h -l help -d 'Print help'
complete -c folio -n "__fish_folio_using_subcommand models; and not __fish_seen_subcommand_from ls pull path help" -f -a "ls" -d 'The catalogue: which models are installed, download sizes, dimensions, pooling and prefixes'
complete -c folio -n "__fish_folio_using_subcommand models; and not __fish_seen_subcommand_from ls pull path help" -f -a "pull" -d 'Fetch a model into the hub cache: a catalogue name, or a hub id ORG/NAME[@REVISION] (the ONNX graph when ONNX Runtime is there, else the safetensors for the candle path)'
complete -c folio -n "__fish_folio_using_subcommand models; and not __fish_seen_subcommand_from ls pull path help" -f -a "path" -d 'Print the folder of an installed model (nothing is fetched)'
complete -c folio -n "__fish_folio_using_subcommand models; and not __fish_seen_subcommand_from ls pull path help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c folio -n "__fish_folio_using_subcommand models; and __fish_seen_subcommand_from ls" -l data-dir -d 'Data directory (default $FOLIO_DATA_DIR, else ~/.local/share/folio/data)' -r -F
complete -c folio -n "__fish_folio_using_subcommand models; and __fish_seen_subcommand_from ls" -l store-url -d 'A PostgreSQL server to use instead of the data directory (default $FOLIO_STORE_URL, else [store] url)' -r
complete -c folio -n "__fish_folio_using_subcommand models; and __fish_seen_subcommand_from ls" -l config -d 'Configuration file (default $FOLIO_CONFIG, else ~/.config/folio/config.toml)' -r -F
complete -c folio -n "__fish_folio_using_subcommand models; and __fish_seen_subcommand_from ls" -l backend -d 'Embedding backend: onnx, candle or openai' -r
complete -c folio -n "__fish_folio_using_subcommand models; and __fish_seen_subcommand_from ls" -l model-dir -d 'Model folder in Hugging Face layout' -r -F
complete -c folio -n "__fish_folio_using_subcommand models; and __fish_seen_subcommand_from ls" -l model -d 'Model by catalogue name (`folio models ls`) or hub id ORG/NAME[@REVISION], fetched on first use (default $FOLIO_MODEL, else [model] name, else all-MiniLM-L6-v2)' -r
complete -c folio -n "__fish_folio_using_subcommand models; and __fish_seen_subcommand_from ls" -l threads -d 'Encoder threads' -r
complete -c folio -n "__fish_folio_using_subcommand models; and __fish_seen_subcommand_from ls" -l json -d 'Print results as JSON'
complete -c folio -n "__fish_folio_using_subcommand models; and __fish_seen_subcommand_from ls" -s v -l verbose -d 'Log progress details to stderr'
complete -c folio -n "__fish_folio_using_subcommand models; and __fish_seen_subcommand_from ls" -s h -l help -d 'Print help'
complete -c folio -n "__fish_folio_using_subcommand models; and __fish_seen_subcommand_from pull" -l data-dir -d 'Data directory (default $FOLIO_DATA_DIR, else ~/.local/share/folio/data)' -r -F
complete -c folio -n "__fish_folio_using_subcommand models; and __fish_seen_subcommand_from pull" -l store-url -d 'A PostgreSQL server to use instead of the data directory (default $FOLIO_STORE_URL, else [store] url)' -r
complete -c folio -n "__fish_folio_using_subcommand models; and __fish_seen_subcommand_from pull" -l config -d 'Configuration file (default $FOLIO_CONFIG, else ~/.config/folio/config.toml)' -r -F
complete -c folio -n "__fish_folio_using_subcommand models; and __fish_seen_subcommand_from pull" -l backend -d 'Embedding backend: onnx, candle or openai' -r
complete -c folio -n "__fish_folio_using_subcommand models; and __fish_seen_subcommand_from pull" -l model-dir -d 'Model folder in Hugging Face layout' -r -F
complete -c folio -n "__fish_folio_using_subcommand models; and __fish_seen_subcommand_from pull" -l threads -d 'Encoder threads' -r
complete -c folio -n "__fish_folio_using_subcommand models; and __fish_seen_subcommand_from pull" -l candle -d 'Fetch the safetensors for the candle path even with ONNX Runtime'
complete -c folio -n "__fish_folio_using_subcommand models; and __fish_seen_subcommand_from pull" -l json -d 'Print results as JSON'
complete -c folio -n "__fish_folio_using_subcommand models; and __fish_seen_subcommand_from pull" -s v -l verbose -d 'Log progress details to stderr'
complete -c folio -n "__fish_folio_using_subcommand models; and __fish_seen_subcommand_from pull" -s h -l help -d 'Print help'
complete -c folio -n "__fish_folio_using_subcommand models; and __fish_seen_subcommand_from path" -l data-dir -d 'Data directory (default $FOLIO_DATA_DIR, else ~/.local/share/folio/data)' -r -F
complete -c folio -n "__fish_folio_using_subcommand models; and __fish_seen_subcommand_from path" -l store-url -d 'A PostgreSQL server to use instead of the data directory (default $FOLIO_STORE_URL, else [store] url)' -r
complete -c folio -n "__fish_folio_using_subcommand models; and __fish_seen_subcommand_from path" -l config -d 'Configuration file (default $FOLIO_CONFIG, else ~/.config/folio/config.toml)' -r -F
complete -c folio -n "__fish_folio_using_subcommand models; and __fish_seen_subcommand_from path" -l backend -d 'Embedding backend: onnx, candle or openai' -r
complete -c folio -n "__fish_folio_using_subcommand models; and __fish_seen_subcommand_from path" -l model-dir -d 'Model folder in Hugging Face layout' -r -F
complete -c folio -n "__fish_folio_using_subcommand models; and __fish_seen_subcommand_from path" -l threads -d 'Encoder threads' -r
complete -c folio -n "__fish_folio_using_subcommand models; and __fish_seen_subcommand_from path" -l json -d 'Print results as JSON'
complete -c folio -n "__fish_folio_using_subcommand models; and __fish_seen_subcommand_from path" -s v -l verbose -d 'Log progress details to stderr'
complete -c folio -n "__fish_folio_using_subcommand models; and __fish_seen_subcommand_from path" -s h -l help -d 'Print help'
complete -c folio -n "__fish_folio_using_subcommand models; and __fish_seen_subcommand_from help" -f -a "ls" -d 'The catalogue: which models are installed, download sizes, dimensions, pooling and prefixes'
complete -c folio -n "__fish_folio_using_subcommand models; and __fish_seen_subcommand_from help" -f -a "pull" -d 'Fetch a model into the hub cache: a catalogue name, or a hub id ORG/NAME[@REVISION] (the ONNX graph when ONNX Runtime is there, else the safetensors for the candle path)'
complete -c folio -n "__fish_folio_using_subcommand models; and __fish_seen_subcommand_from help" -f -a "path" -d 'Print the folder of an installed model (nothing is fetched)'
complete -c folio -n "__fish_folio_using_subcommand models; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c folio -n "__fish_folio_using_subcommand completions" -l data-dir -d 'Data directory (default $FOLIO_DATA_DIR, else ~/.local/share/folio/data)' -r -F
complete -c folio -n "__fish_folio_using_subcommand completions" -l store-url -d 'A PostgreSQL server to use instead of the data directory (default $FOLIO_STORE_URL, else [store] url)' -r
complete -c folio -n "__fish_folio_using_subcommand completions" -l config -d 'Configuration file (default $FOLIO_CONFIG, else ~/.config/folio/config.toml)' -r -F
complete -c folio -n "__fish_folio_using_subcommand completions" -l backend -d 'Embedding backend: onnx, candle or openai' -r
complete -c folio -n "__fish_folio_using_subcommand completions" -l model-dir -d 'Model folder in Hugging Face layout' -r -F
complete -c folio -n "__fish_folio_using_subcommand completions" -l model -d 'Model by catalogue name (`folio models ls`) or hub id ORG/NAME[@REVISION], fetched on first use (default $FOLIO_MODEL, else [model] name, else all-MiniLM-L6-v2)' -r
complete -c folio -n "__fish_folio_using_subcommand completions" -l threads -d 'Encoder threads' -r
complete -c folio -n "__fish_folio_using_subcommand completions" -l json -d 'Print results as JSON'
complete -c folio -n "__fish_folio_using_subcommand completions" -s v -l verbose -d 'Log progress details to stderr'
complete -c folio -n "__fish_folio_using_subcommand completions" -s h -l help -d 'Print help'
complete -c folio -n "__fish_folio_using_subcommand man" -l data-dir -d 'Data directory (default $FOLIO_DATA_DIR, else ~/.local/share/folio/data)' -r -F
complete -c folio -n "__fish_folio_using_subcommand man" -l store-url -d 'A PostgreSQL server to use instead of the data directory (default $FOLIO_STORE_URL, else [store] url)' -r
complete -c folio -n "__fish_folio_using_subcommand man" -l config -d 'Configuration file (default $FOLIO_CONFIG, else ~/.config/folio/config.toml)' -r -F
complete -c folio -n "__fish_folio_using_subcommand man" -l backend -d 'Embedding backend: onnx, candle or openai' -r
complete -c folio -n "__fish_folio_using_subcommand man" -l model-dir -d 'Model folder in Hugging Face layout' -r -F
complete -c folio -n "__fish_folio_using_subcommand man" -l model -d 'Model by catalogue name (`folio models ls`) or hub id ORG/NAME[@REVISION], fetched on first use (default $FOLIO_MODEL, else [model] name, else all-MiniLM-L6-v2)' -r
complete -c folio -n "__fish_folio_using_subcommand man" -l threads -d 'Encoder threads' -r
complete -c folio -n "__fish_folio_using_subcommand man" -l json -d 'Print results as JSON'
complete -c folio -n "__fish_folio_using_subcommand man" -s v -l verbose -d 'Log progress details to stderr'
complete -c folio -n "__fish_folio_using_subcommand man" -s h -l help -d 'Print help'
complete -c folio -n "__fish_folio_using_subcommand help; and not __fish_seen_subcommand_from ingest search get ls rm create inspect check rebuild copy eval bench serve schema facets references quote keys entities entity sync models completions man help" -f -a "ingest" -d 'Ingest files, folders (recursively) and URLs into a library'
complete -c folio -n "__fish_folio_using_subcommand help; and not __fish_seen_subcommand_from ingest search get ls rm create inspect check rebuild copy eval bench serve schema facets references quote keys entities entity sync models completions man help" -f -a "search" -d 'Search a library'
complete -c folio -n "__fish_folio_using_subcommand help; and not __fish_seen_subcommand_from ingest search get ls rm create inspect check rebuild copy eval bench serve schema facets references quote keys entities entity sync models completions man help" -f -a "get" -d 'Show a document (metadata, and text or chunks on request)'
complete -c folio -n "__fish_folio_using_subcommand help; and not __fish_seen_subcommand_from ingest search get ls rm create inspect check rebuild copy eval bench serve schema facets references quote keys entities entity sync models completions man help" -f -a "ls" -d 'List libraries, or the documents of one library'
complete -c folio -n "__fish_folio_using_subcommand help; and not __fish_seen_subcommand_from ingest search get ls rm create inspect check rebuild copy eval bench serve schema facets references quote keys entities entity sync models completions man help" -f -a "rm" -d 'Delete a document, or with --library a whole library'
complete -c folio -n "__fish_folio_using_subcommand help; and not __fish_seen_subcommand_from ingest search get ls rm create inspect check rebuild copy eval bench serve schema facets references quote keys entities entity sync models completions man help" -f -a "create" -d 'Create an empty library (a citeloom project), pinned to the current model; ingesting creates libraries too'
complete -c folio -n "__fish_folio_using_subcommand help; and not __fish_seen_subcommand_from ingest search get ls rm create inspect check rebuild copy eval bench serve schema facets references quote keys entities entity sync models completions man help" -f -a "inspect" -d 'Statistics of a library'
complete -c folio -n "__fish_folio_using_subcommand help; and not __fish_seen_subcommand_from ingest search get ls rm create inspect check rebuild copy eval bench serve schema facets references quote keys entities entity sync models completions man help" -f -a "check" -d 'Check that every document of a library is whole in every index (exit 1 when not)'
complete -c folio -n "__fish_folio_using_subcommand help; and not __fish_seen_subcommand_from ingest search get ls rm create inspect check rebuild copy eval bench serve schema facets references quote keys entities entity sync models completions man help" -f -a "rebuild" -d 'Re-embed a library with the current model (after a model change)'
complete -c folio -n "__fish_folio_using_subcommand help; and not __fish_seen_subcommand_from ingest search get ls rm create inspect check rebuild copy eval bench serve schema facets references quote keys entities entity sync models completions man help" -f -a "copy" -d 'Copy a library, vectors included, from another store into this one (an embedded data directory into PostgreSQL, or back). Resumable: documents already copied are left alone'
complete -c folio -n "__fish_folio_using_subcommand help; and not __fish_seen_subcommand_from ingest search get ls rm create inspect check rebuild copy eval bench serve schema facets references quote keys entities entity sync models completions man help" -f -a "eval" -d 'Evaluate retrieval on a BEIR directory (nDCG@10, Recall@100, MRR@10)'
complete -c folio -n "__fish_folio_using_subcommand help; and not __fish_seen_subcommand_from ingest search get ls rm create inspect check rebuild copy eval bench serve schema facets references quote keys entities entity sync models completions man help" -f -a "bench" -d 'Benchmark search on a synthetic library, or the encoder on a corpus'
complete -c folio -n "__fish_folio_using_subcommand help; and not __fish_seen_subcommand_from ingest search get ls rm create inspect check rebuild copy eval bench serve schema facets references quote keys entities entity sync models completions man help" -f -a "serve" -d 'Serve MCP over stdio (for Claude Desktop, Cursor, Claude Code) or HTTP'
complete -c folio -n "__fish_folio_using_subcommand help; and not __fish_seen_subcommand_from ingest search get ls rm create inspect check rebuild copy eval bench serve schema facets references quote keys entities entity sync models completions man help" -f -a "schema" -d 'Declare or show a library\'s record schema (typed fields and rules)'
complete -c folio -n "__fish_folio_using_subcommand help; and not __fish_seen_subcommand_from ingest search get ls rm create inspect check rebuild copy eval bench serve schema facets references quote keys entities entity sync models completions man help" -f -a "facets" -d 'Counts and statistics of a library\'s records, grouped by fields'
complete -c folio -n "__fish_folio_using_subcommand help; and not __fish_seen_subcommand_from ingest search get ls rm create inspect check rebuild copy eval bench serve schema facets references quote keys entities entity sync models completions man help" -f -a "references" -d 'Attach a reference list (CSL-JSON or BibTeX) to a library\'s documents'
complete -c folio -n "__fish_folio_using_subcommand help; and not __fish_seen_subcommand_from ingest search get ls rm create inspect check rebuild copy eval bench serve schema facets references quote keys entities entity sync models completions man help" -f -a "quote" -d 'Find where a passage occurs: document, page and char offsets'
complete -c folio -n "__fish_folio_using_subcommand help; and not __fish_seen_subcommand_from ingest search get ls rm create inspect check rebuild copy eval bench serve schema facets references quote keys entities entity sync models completions man help" -f -a "keys" -d 'Access keys of a shared server (`folio serve --http --auth keys`)'
complete -c folio -n "__fish_folio_using_subcommand help; and not __fish_seen_subcommand_from ingest search get ls rm create inspect check rebuild copy eval bench serve schema facets references quote keys entities entity sync models completions man help" -f -a "entities" -d 'The entities a library\'s documents mention most (names found while ingesting); `import` declares entities, `relink` reads the stored documents again for them'
complete -c folio -n "__fish_folio_using_subcommand help; and not __fish_seen_subcommand_from ingest search get ls rm create inspect check rebuild copy eval bench serve schema facets references quote keys entities entity sync models completions man help" -f -a "entity" -d 'One entity\'s card: declared aliases, attributes and relations, mentions, documents, related entities with evidence'
complete -c folio -n "__fish_folio_using_subcommand help; and not __fish_seen_subcommand_from ingest search get ls rm create inspect check rebuild copy eval bench serve schema facets references quote keys entities entity sync models completions man help" -f -a "sync" -d 'Make a library\'s documents from a folder exactly the folder\'s files: add, replace, move (nothing re-embedded) and remove, in one pass or, with --watch, whenever the folder changes'
complete -c folio -n "__fish_folio_using_subcommand help; and not __fish_seen_subcommand_from ingest search get ls rm create inspect check rebuild copy eval bench serve schema facets references quote keys entities entity sync models completions man help" -f -a "models" -d 'The model catalogue (`ls`), fetching from the Hugging Face hub (`pull`), and where an installed model is (`path`)'
complete -c folio -n "__fish_folio_using_subcommand help; and not __fish_seen_subcommand_from ingest search get ls rm create inspect check rebuild copy eval bench serve schema facets references quote keys entities entity sync models completions man help" -f -a "completions" -d 'Print a shell completion script: `folio completions bash > ~/.local/share/bash-completion/completions/folio`'
complete -c folio -n "__fish_folio_using_subcommand help; and not __fish_seen_subcommand_from ingest search get ls rm create inspect check rebuild copy eval bench serve schema facets references quote keys entities entity sync models completions man help" -f -a "man" -d 'Print the man page, folio(1), in roff: `folio man | man -l -`'
complete -c folio -n "__fish_folio_using_subcommand help; and not __fish_seen_subcommand_from ingest search get ls rm create inspect check rebuild copy eval bench serve schema facets references quote keys entities entity sync models completions man help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c folio -n "__fish_folio_using_subcommand help; and __fish_seen_subcommand_from bench" -f -a "search" -d 'Search latency, get-by-id latency, memory and disk on a synthetic library'
complete -c folio -n "__fish_folio_using_subcommand help; and __fish_seen_subcommand_from bench" -f -a "encoder" -d 'Encoder throughput on the first documents of a BEIR corpus.jsonl'
complete -c folio -n "__fish_folio_using_subcommand help; and __fish_seen_subcommand_from keys" -f -a "create" -d 'Create a key and print it (once: only its hash is kept)'
complete -c folio -n "__fish_folio_using_subcommand help; and __fish_seen_subcommand_from keys" -f -a "ls" -d 'List the keys: names, scopes, libraries, expiry, rate, last use'
complete -c folio -n "__fish_folio_using_subcommand help; and __fish_seen_subcommand_from keys" -f -a "revoke" -d 'Revoke a key: every server refuses it within seconds'
complete -c folio -n "__fish_folio_using_subcommand help; and __fish_seen_subcommand_from entities" -f -a "import" -d 'Declare entities from a CSV (name, type, aliases separated by `|`, relations as `relation: target|...`, other columns attributes) or JSON Lines file, then relink the library\'s documents. A file with a bad line is refused whole, every bad line named'
complete -c folio -n "__fish_folio_using_subcommand help; and __fish_seen_subcommand_from entities" -f -a "relink" -d 'Read the library\'s stored documents again for the entities they mention (no embedding): builds the graph of a library ingested before entities existed. Safe to interrupt and run again'
complete -c folio -n "__fish_folio_using_subcommand help; and __fish_seen_subcommand_from models" -f -a "ls" -d 'The catalogue: which models are installed, download sizes, dimensions, pooling and prefixes'
complete -c folio -n "__fish_folio_using_subcommand help; and __fish_seen_subcommand_from models" -f -a "pull" -d 'Fetch a model into the hub cache: a catalogue name, or a hub id ORG/NAME[@REVISION] (the ONNX graph when ONNX Runtime is there, else the safetensors for the candle path)'
complete -c folio -n "__fish_folio_using_subcommand help; and __fish_seen_subcommand_from models" -f -a "path" -d 'Print the folder of an installed model (nothing is fetched)'
