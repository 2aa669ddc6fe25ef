#!/bin/sh
# One-shot (admin-tools image): wait for the Temporal frontend, then register the search attributes
# every agents-kit workflow carries (domain/search-attributes.ts). Safe to run again.
set -eu
address="${TEMPORAL_ADDRESS:-temporal:7233}"
namespace="${TEMPORAL_NAMESPACE:-default}"
echo "waiting for Temporal at $address…"
until temporal operator cluster health --address "$address" 2>/dev/null | grep -q SERVING; do sleep 2; done
until temporal operator namespace describe --address "$address" --namespace "$namespace" >/dev/null 2>&1; do
  echo "waiting for namespace $namespace…"
  sleep 2
done
for attribute in AgentRootThreadId=Keyword AgentParentThreadId=Keyword AgentStatus=Keyword AgentName=Keyword AgentDepth=Int; do
  name="${attribute%%=*}"
  type="${attribute#*=}"
  if temporal operator search-attribute list --address "$address" --namespace "$namespace" | grep -q "$name"; then
    echo "search attribute $name exists"
  else
    temporal operator search-attribute create --address "$address" --namespace "$namespace" --name "$name" --type "$type"
    echo "registered search attribute $name ($type)"
  fi
done
