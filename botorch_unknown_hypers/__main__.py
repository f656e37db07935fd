import sys

from botorch_unknown_hypers.cli import main

sys.exit(main())
