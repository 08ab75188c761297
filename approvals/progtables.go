package approvals

// Per-program option tables (see optable.go). A '!' marks an option that
// makes the command unsafe: it writes somewhere the operands do not say,
// runs another program, loads code or changes the system. Tables marked
// other() accept options they do not list: those programs have no option
// beyond the bad ones that writes or runs code, and an abbreviation of a
// bad option is still caught.

var (
	rmTable = newOptTable(styleGNU, "-f|--force -i -I --interactive? --one-file-system --no-preserve-root "+
		"--preserve-root? -r|-R|--recursive -d|--dir -v|--verbose --help --version")

	sortTable = newOptTable(styleGNU, "-b|--ignore-leading-blanks -d|--dictionary-order -f|--ignore-case "+
		"-g|--general-numeric-sort -i|--ignore-nonprinting -M|--month-sort -h|--human-numeric-sort "+
		"-n|--numeric-sort -R|--random-sort --random-source= -r|--reverse -V|--version-sort --sort= "+
		"-c|--check? -C -m|--merge -s|--stable -u|--unique -z|--zero-terminated --debug "+
		"-k|--key= -t|--field-separator= -S|--buffer-size= --parallel= --batch-size= !--files0-from= "+
		"-o|--output= !-T|--temporary-directory= !--compress-program= --help --version")

	dateTable = newOptTable(styleGNU, "-d|--date= -f|--file= -I|--iso-8601? -R|--rfc-email --rfc-3339= "+
		"-r|--reference= -u|--utc|--universal --debug --resolution !-s|--set= --help --version")

	fileTable = newOptTable(styleGNU, "--apple -b|--brief -c|--checking-printout !-C|--compile -d|--debug "+
		"-E -e|--exclude= --exclude-quiet= --extension -F|--separator= -f|--files-from= -h|--no-dereference "+
		"-i|--mime --mime-type --mime-encoding -k|--keep-going -l|--list -L|--dereference -m|--magic-file= "+
		"-N|--no-pad -n|--no-buffer -0|--print0 -p|--preserve-date -P|--parameter= -r|--raw -s|--special-files "+
		"-S|--no-sandbox -z|--uncompress -Z|--uncompress-noreport -v|--version --help")

	treeTable = newOptTable(styleExact, "-L= -P= -I= -H= -T= --charset= --filelimit= --timefmt= !-o= !-R").other()
	rgTable   = newOptTable(styleExact, "!--pre= !--hostname-bin= -e|--regexp= -f|--file= -g|--glob= -t|--type= -T|--type-not= "+
		"-m|--max-count= -A|--after-context= -B|--before-context= -C|--context= -j|--threads= -M|--max-columns= "+
		"--pre-glob= --pretty -p -E|--encoding= --iglob= --sort= --sortr= --type-add= --max-depth= -d "+
		"--ignore-file= -r|--replace= --color= --colors= --path-separator= --context-separator= --field-match-separator=").other()
	fdTable = newOptTable(styleExact, "!-x|--exec= !-X|--exec-batch= -e|--extension= -t|--type= -E|--exclude= "+
		"-d|--max-depth= --min-depth= --exact-depth= -S|--size= -j|--threads= -c|--color= --changed-within= "+
		"--changed-before= -o|--owner= --base-directory= --path-separator= --search-path= --max-results= "+
		"--ignore-file=").other()
	jqTable = newOptTable(styleExact, "!-i|--in-place !-f|--from-file= --arg= --argjson= --slurpfile= "+
		"--rawfile= --args --jsonargs --indent= -L= --tab -n|--null-input -r|--raw-output -j|--join-output "+
		"-a|--ascii-output -s|--slurp -c|--compact-output -C|--color-output -M|--monochrome-output -S|--sort-keys "+
		"-e|--exit-status -R|--raw-input --seq --stream --stream-errors --unbuffered -0|--nul-output "+
		"--raw-output0 --version --help").other()
)

// gitGlobal are git's options before the subcommand (git matches them
// exactly: no abbreviations). -C, --no-pager,
// --paginate and the pathspec switches are the plain ones; the rest point
// git at other repositories or configuration, or run programs.
var gitGlobal = newOptTable(styleExact, "-C= --no-pager -P -p|--paginate --no-optional-locks "+
	"--literal-pathspecs --glob-pathspecs --noglob-pathspecs --icase-pathspecs --no-replace-objects "+
	"!-c= !--config-env= !--git-dir= !--work-tree= !--namespace= !--exec-path? !--super-prefix= !--bare "+
	"!--list-cmds= !--attr-source= --version --help -v -h").posix()

// Git subcommand tables. Read-only subcommands accept options they do not
// list (git refuses unknown ones); the bad ones are listed so that their
// abbreviations are caught too.
var (
	gitAnyTable = newOptTable(styleGNU, "").other()

	gitDiffTable = newOptTable(styleGNU, "!--output= !--ext-diff !--textconv !-O? !--open-files-in-pager? "+
		"--text -a --no-ext-diff --no-textconv --output-indicator-new= --output-indicator-old= "+
		"--output-indicator-context= -n|--max-count= --skip= --format= --pretty? --grep= --author= "+
		"--committer= -S= -G= -L= --since= --until= --after= --before= -U|--unified= --stat? --color? "+
		"--diff-filter= --relative? -M|--find-renames? -C|--find-copies? --abbrev? --date= --encoding= "+
		"--word-diff? --word-diff-regex= --anchored= --src-prefix= --dst-prefix= --line-prefix= "+
		"--decorate? --decorate-refs= --decorate-refs-exclude= --notes? --min-parents= --max-parents=").other()

	gitBranchTable = newOptTable(styleGNU, "!-d|--delete !-D !-f|--force !-m|--move !-M !-c|--copy !-C "+
		"-l|--list -a|--all -r|--remotes -v|-vv|--verbose -q|--quiet !-t|--track? !--no-track "+
		"!-u|--set-upstream-to= !--unset-upstream !--edit-description --contains= --no-contains= "+
		"--merged= --no-merged= --points-at= --sort= --format= --color? --no-color --column? --no-column "+
		"--abbrev? --no-abbrev --show-current !--create-reflog !--recurse-submodules -i|--ignore-case --omit-empty")

	gitPushTable = newOptTable(styleGNU, "--all --branches --mirror -d|--delete --tags -n|--dry-run --porcelain "+
		"-f|--force --force-with-lease? --force-if-includes --recurse-submodules= --thin --receive-pack= "+
		"--exec= -u|--set-upstream --progress --prune --no-verify --verify --follow-tags --signed? --atomic "+
		"-o|--push-option= -4|--ipv4 -6|--ipv6 --repo= -q|--quiet -v|--verbose")

	gitResetTable = newOptTable(styleGNU, "--soft --mixed --hard --merge --keep -q|--quiet -N|--intent-to-add "+
		"-p|--patch --recurse-submodules? --pathspec-from-file= --pathspec-file-nul --refresh --no-refresh")

	gitCheckoutTable = newOptTable(styleGNU, "-f|--force --discard-changes -b= -B= -c|--create= -C|--force-create= "+
		"--orphan= -t|--track? --no-track --conflict= -m|--merge -p|--patch -q|--quiet --detach --guess --no-guess "+
		"--ours --theirs --pathspec-from-file= --recurse-submodules --progress --overlay --no-overlay").other()

	gitCleanTable = newOptTable(styleGNU, "-d -f|--force -i|--interactive -n|--dry-run -q|--quiet "+
		"-e|--exclude= -x -X")

	gitDifftoolTable = newOptTable(styleGNU, "-d|--dir-diff -y|--no-prompt --prompt --rotate-to= --skip-to= "+
		"-t|--tool= --tool-help --symlinks -x|--extcmd= -g|--gui --trust-exit-code").other()

	gitRebaseTable = newOptTable(styleGNU, "--onto= --keep-base --continue --abort --quit --skip "+
		"--edit-todo --show-current-patch -m|--merge --apply -i|--interactive -x|--exec= -s|--strategy= "+
		"-X|--strategy-option= -S|--gpg-sign? --empty= --autosquash --autostash -r|--rebase-merges? "+
		"-C= --whitespace= --root --update-refs -q|--quiet -v|--verbose -n|--no-stat --stat -f|--force-rebase").other()

	gitGrepTable = newOptTable(styleGNU, "-O|--open-files-in-pager? -e= -f= -A|--after-context= "+
		"-B|--before-context= -C|--context= -m|--max-count= --max-depth= --threads= --color? "+
		"-t --untracked --no-index --cached").other()

	gitFilterBranchTable = newOptTable(styleGNU, "--setup= --subdirectory-filter= --env-filter= "+
		"--tree-filter= --index-filter= --parent-filter= --msg-filter= --commit-filter= --tag-name-filter= "+
		"-d= --original= --state-branch= -f|--force --prune-empty").other()

	gitConfigTable = newOptTable(styleGNU, "--global --system --local --worktree -f|--file= --blob= "+
		"--get --get-all --get-regexp --get-urlmatch --replace-all --add --unset --unset-all "+
		"--rename-section --remove-section -l|--list -e|--edit --type= --bool --int --bool-or-int --path "+
		"--expiry-date -z|--null --name-only --show-origin --show-scope --get-color --get-colorbool "+
		"--default= --fixed-value --includes --no-includes --all --value= --comment=").other()
)

// gitSubTable returns the option table of a git subcommand.
func gitSubTable(sub string) *optTable {
	switch sub {
	case "diff", "log", "show", "whatchanged":
		return gitDiffTable
	case "branch":
		return gitBranchTable
	case "push":
		return gitPushTable
	case "reset":
		return gitResetTable
	case "clean":
		return gitCleanTable
	case "difftool":
		return gitDifftoolTable
	case "rebase":
		return gitRebaseTable
	case "grep":
		return gitGrepTable
	case "filter-branch":
		return gitFilterBranchTable
	case "config":
		return gitConfigTable
	}
	return gitAnyTable
}

// Build tools and test runners of the safe list: only the listed options
// are accepted.
var (
	makeTable = newOptTable(styleGNU, "-j|--jobs? -k|--keep-going -S|--no-keep-going|--stop -s|--silent|--quiet "+
		"--no-silent -n|--just-print|--dry-run|--recon -q|--question -B|--always-make -w|--print-directory "+
		"--no-print-directory -O|--output-sync? -l|--load-average|--max-load? -r|--no-builtin-rules "+
		"-R|--no-builtin-variables -d --debug? -i|--ignore-errors -t|--touch --trace -W|--what-if|--new-file|--assume-new= "+
		"-o|--old-file|--assume-old= -L|--check-symlink-times --warn-undefined-variables "+
		"!-f|--file|--makefile= !-C|--directory= !--eval= !-I|--include-dir= !-e|--environment-overrides "+
		"!-E= -v|--version -h|--help -p|--print-data-base")

	// goFlags are the build and test flags of go test/build/vet accepted as
	// safe; writes (-o, profiles) are recorded as targets and judged.
	goFlags = newOptTable(styleGo, "-v -race -msan -asan -cover -covermode= -coverpkg= -a -n -x -work "+
		"-p= -tags= -trimpath -mod= -modcacherw -buildvcs? -buildmode= -compiler= -pgo= -gcflags= "+
		"-run= -skip= -bench= -benchtime= -benchmem -count= -cpu= -failfast -fullpath -json -list= "+
		"-parallel= -short -shuffle= -timeout= -vet= -fuzz= -fuzztime= -fuzzminimizetime= -o= "+
		"-coverprofile= -cpuprofile= -memprofile= -blockprofile= -mutexprofile= -trace= -outputdir= "+
		"-c -i -benchtime= -memprofilerate= -blockprofilerate= -mutexprofilefraction= -test.v -test.run= "+
		"!-exec= !-toolexec= !-ldflags= !-asmflags= !-gccgoflags= !-overlay= !-modfile= !-C= !-pkgdir= "+
		"!-args !-linkshared !-installsuffix= !-vettool=")

	npmTable = newOptTable(styleExact, "-s|--silent -q|--quiet -d --loglevel= --if-present --ignore-scripts "+
		"-ws|--workspaces -w|--workspace= --include-workspace-root --color= --no-color --no-progress "+
		"!--script-shell= !--prefix= !-C|--dir= !--userconfig= !--globalconfig= !--node-options= "+
		"!--cwd= -F|--filter= !-g|--global !--registry=")

	nodeTestTable = newOptTable(styleExact, "--test --test-name-pattern= --test-skip-pattern= --test-reporter= "+
		"--test-only --test-concurrency= --test-timeout= --test-shard= --experimental-test-coverage "+
		"--test-force-exit --experimental-strip-types --no-warnings --enable-source-maps "+
		"!-r|--require= !--import= !--loader= !--experimental-loader= !-e|--eval= !-p|--print= "+
		"!--env-file= !--test-reporter-destination= !--inspect? !--inspect-brk?").posix()

	tscTable = newOptTable(styleExact, "--noEmit -p|--project= --pretty --strict --skipLibCheck --incremental "+
		"--listFiles --extendedDiagnostics --diagnostics --noErrorTruncation --traceResolution "+
		"--noUnusedLocals --noUnusedParameters --noImplicitAny --target= --module= --lib= --jsx= "+
		"--moduleResolution= --allowJs --checkJs --esModuleInterop --resolveJsonModule --isolatedModules "+
		"-b|--build --verbose --force --watch=false")

	vitestTable = newOptTable(styleExact, "-t|--testNamePattern= --reporter= --coverage --silent "+
		"--passWithNoTests --project= --changed? -u|--update --shard= --pool= --bail= --retry= "+
		"--no-watch --run --allowOnly --sequence.shuffle --testTimeout= --hideSkippedTests "+
		"!-c|--config= !-r|--root= !--dir= !--globalSetup= !--setupFiles= !--environment= !--outputFile= !--ui !--api?")

	pytestTable = newOptTable(styleGNU, "-q|--quiet -v|--verbose -vv -x|--exitfirst -k= -m= -s --lf|--last-failed "+
		"--ff|--failed-first --nf|--new-first --sw|--stepwise --tb= --maxfail= -n= -r= --co|--collect-only "+
		"--durations= --no-header --no-summary --color= --strict-markers -l|--showlocals --disable-warnings "+
		"--runxfail --doctest-modules --cov? --cov-report= "+
		"!-p= !-c= !--rootdir= !--confcutdir= !--basetemp= !-W= !--pdb !--pdbcls= !--import-mode= "+
		"!--override-ini= !-o= !--junit-xml|--junitxml= !--resultlog= !--debug?")

	cargoTable = newOptTable(styleExact, "--release -r --all-targets --workspace --all -p|--package= "+
		"-F|--features= --all-features --no-default-features --lib --bins --tests --benches --examples "+
		"--bin= --test= --example= --bench= -j|--jobs= -q|--quiet -v|--verbose -vv --locked --offline "+
		"--frozen --target= --no-fail-fast --doc --no-run --exclude= --message-format= --color= --profile= "+
		"--keep-going --timings? "+
		"!--manifest-path= !--config= !-Z= !--target-dir= !--artifact-dir= !-C= !--out-dir=")
)

// Programs that run commands given in their options.
var (
	tarTable = newOptTable(styleGNU, "-f|--file= -C|--directory= -T|--files-from= -X|--exclude-from= "+
		"-b|--blocking-factor= -H|--format= -K|--starting-file= -N|--newer|--after-date= -L|--tape-length= "+
		"-g|--listed-incremental= -V|--label= --exclude= --owner= --group= --mode= --mtime= --transform|--xform= "+
		"--strip-components= --checkpoint? --checkpoint-action= --to-command= -I|--use-compress-program= "+
		"--rsh-command= -F|--info-script|--new-volume-script= --index-file= --volno-file= --record-size= "+
		"--suffix= --backup? --newer-mtime= --occurrence? --quoting-style= --sort= --warning= "+
		"--exclude-tag= --exclude-tag-all= --exclude-tag-under= --hole-detection= --sparse-version= "+
		"--atime-preserve? --pax-option= --level= --one-top-level? --numeric-owner").other()

	sedTable = newOptTable(styleGNU, "-e|--expression= -f|--file= -i|--in-place? -l|--line-length= "+
		"-n|--quiet|--silent -E|-r|--regexp-extended -s|--separate -z|--null-data -u|--unbuffered "+
		"--posix --debug --sandbox --follow-symlinks -b|--binary --help --version")
)
