# Ward's fixed Windows secret helper (C1). It stores CurrentUser DPAPI ciphertext under
# %LOCALAPPDATA%\Ward\secrets\<namespace hash>\<entry hash>.dpapi and reads it back.
# The secret travels only on stdin (set) and stdout (get), never in arguments; failures exit
# non-zero and Ward never falls back to plaintext.
# Exit codes: 0 ok, 2 bad input, 3 no such entry, 1 anything else.
param(
  [Parameter(Mandatory = $true)][ValidateSet('get', 'set', 'delete')][string]$Action,
  [Parameter(Mandatory = $true)][ValidatePattern('^[0-9a-f]{64}$')][string]$Entry,
  [Parameter(Mandatory = $true)][ValidatePattern('^[0-9a-f]{64}$')][string]$Namespace
)
$ErrorActionPreference = 'Stop'
Set-StrictMode -Version Latest
Add-Type -AssemblyName System.Security

$root = [Environment]::GetFolderPath([Environment+SpecialFolder]::LocalApplicationData)
if ([string]::IsNullOrEmpty($root)) { [Console]::Error.WriteLine('LocalAppData is not available'); exit 1 }
$dir = [IO.Path]::Combine($root, 'Ward', 'secrets', $Namespace)
$file = [IO.Path]::Combine($dir, "$Entry.dpapi")
# Per-namespace entropy: ciphertext copied into another namespace's folder does not decrypt.
$entropy = [Text.Encoding]::UTF8.GetBytes("ward-dpapi`0$Namespace")
$scope = [Security.Cryptography.DataProtectionScope]::CurrentUser

try {
  switch ($Action) {
    'set' {
      $buffer = New-Object IO.MemoryStream
      [Console]::OpenStandardInput().CopyTo($buffer)
      $plain = $buffer.ToArray()
      if ($plain.Length -eq 0 -or $plain.Length -gt 65536) { [Console]::Error.WriteLine('the secret on stdin is empty or larger than 64 KiB'); exit 2 }
      $cipher = [Security.Cryptography.ProtectedData]::Protect($plain, $entropy, $scope)
      [Array]::Clear($plain, 0, $plain.Length)
      [IO.Directory]::CreateDirectory($dir) | Out-Null
      $temp = "$file.$PID.tmp"
      [IO.File]::WriteAllBytes($temp, $cipher)
      if ([IO.File]::Exists($file)) { [IO.File]::Replace($temp, $file, $null) } else { [IO.File]::Move($temp, $file) }
      exit 0
    }
    'get' {
      if (-not [IO.File]::Exists($file)) { exit 3 }
      $plain = [Security.Cryptography.ProtectedData]::Unprotect([IO.File]::ReadAllBytes($file), $entropy, $scope)
      $out = [Console]::OpenStandardOutput()
      $out.Write($plain, 0, $plain.Length)
      $out.Flush()
      exit 0
    }
    'delete' {
      if (-not [IO.File]::Exists($file)) { exit 3 }
      [IO.File]::Delete($file)
      exit 0
    }
  }
} catch {
  # The exception message names the failing operation, never the secret.
  [Console]::Error.WriteLine("ward-dpapi: $($_.Exception.GetType().Name): $($_.Exception.Message)")
  exit 1
}
