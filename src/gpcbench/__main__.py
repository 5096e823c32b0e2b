from gpcbench.cli import main

raise SystemExit(main())
