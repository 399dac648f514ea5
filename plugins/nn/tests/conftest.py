import sys
from pathlib import Path

# Helper modules beside this file (mindspore_checkpoint_values) import by name, here and in
# the MindSpore interpreter that made the fixtures.
sys.path.insert(0, str(Path(__file__).parent))
