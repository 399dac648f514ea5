import sys
from pathlib import Path

# Helper modules beside this file (model builders, ONNX checks) are imported by name whatever
# import mode pytest uses for the test modules.
sys.path.insert(0, str(Path(__file__).parent))
