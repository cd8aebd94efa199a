; Inno Setup script for the Windows installer (UNTESTED here: build on Windows).
; 1. On Windows: py -3.11 -m venv build\pkg-venv && build\pkg-venv\Scripts\pip install -e . pyinstaller
; 2. build\pkg-venv\Scripts\pyinstaller --noconfirm packaging\tflite_inspector.spec
; 3. iscc packaging\windows\tflite-inspector.iss   -> dist\tflite-inspector-setup.exe
#define AppVersion "0.1.0"

[Setup]
AppId={{6C1E9B0E-6B7B-4F1E-9D7C-2F8E2B9A4C11}
AppName=TFLite Quantization Inspector
AppVersion={#AppVersion}
AppPublisher=TFLite Quantization Inspector
DefaultDirName={autopf}\TFLite Quantization Inspector
DefaultGroupName=TFLite Quantization Inspector
OutputDir=..\..\dist
OutputBaseFilename=tflite-inspector-{#AppVersion}-setup
SetupIconFile=..\..\inspector\resources\icons\tflite-inspector.ico
Compression=lzma2
SolidCompression=yes
ArchitecturesInstallIn64BitMode=x64compatible
PrivilegesRequired=lowest

[Files]
Source: "..\..\dist\tflite-inspector\*"; DestDir: "{app}"; Flags: recursesubdirs ignoreversion

[Icons]
Name: "{group}\TFLite Quantization Inspector"; Filename: "{app}\tflite-inspector.exe"
Name: "{autodesktop}\TFLite Quantization Inspector"; Filename: "{app}\tflite-inspector.exe"; Tasks: desktopicon

[Tasks]
Name: "desktopicon"; Description: "Create a desktop icon"; Flags: unchecked

[Registry]
Root: HKCU; Subkey: "Software\Classes\.tflite"; ValueType: string; ValueData: "TFLiteInspector.Model"; Flags: uninsdeletevalue
Root: HKCU; Subkey: "Software\Classes\TFLiteInspector.Model\shell\open\command"; ValueType: string; ValueData: """{app}\tflite-inspector.exe"" ""%1"""

[Run]
Filename: "{app}\tflite-inspector.exe"; Description: "Launch TFLite Quantization Inspector"; Flags: nowait postinstall skipifsilent
