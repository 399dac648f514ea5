import sys
from pathlib import Path

# the tests' task and Flower components are top-level modules of this folder
sys.path.insert(0, str(Path(__file__).parent))
