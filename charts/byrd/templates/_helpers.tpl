{{/*
Names and labels.
*/}}
{{- define "byrd.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "byrd.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* Objects of one service are named <fullname>-<service>. Args: root, name. */}}
{{- define "byrd.serviceFullname" -}}
{{- printf "%s-%s" (include "byrd.fullname" .root) .name | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* Args: root, component. */}}
{{- define "byrd.selectorLabels" -}}
app.kubernetes.io/name: {{ include "byrd.name" .root }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end -}}

{{/* Args: root, component. */}}
{{- define "byrd.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .root.Chart.Name .root.Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{ include "byrd.selectorLabels" . }}
app.kubernetes.io/part-of: byrd
app.kubernetes.io/version: {{ .root.Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .root.Release.Service }}
{{- end -}}

{{/*
The route table (files/routes.json, a copy of deploy/routes.json that the chart checks keep equal):
{ services: { <name>: { port, host } }, routes: [ { prefix, service } ] }. Use with fromJson.
*/}}
{{- define "byrd.routeTable" -}}
{{- $raw := .Files.Get "files/routes.json" -}}
{{- if not $raw -}}
{{- fail "files/routes.json is missing from the chart: run `npm run sync-routes -w @byrd/charts` (it copies deploy/routes.json)" -}}
{{- end -}}
{{- $raw -}}
{{- end -}}

{{/* The route table without the services this release does not deploy, as compact JSON. Args: root. */}}
{{- define "byrd.enabledRouteTable" -}}
{{- $table := include "byrd.routeTable" . | fromJson -}}
{{- $services := dict -}}
{{- $routes := list -}}
{{- range $name, $entry := $table.services -}}
{{- $svc := include "byrd.serviceValues" (dict "root" $ "name" $name) | fromYaml -}}
{{- if and (hasKey $.Values.services $name) $svc.enabled -}}
{{- $_ := set $services $name $entry -}}
{{- end -}}
{{- end -}}
{{- range $table.routes -}}
{{- if hasKey $services .service -}}
{{- $routes = append $routes . -}}
{{- end -}}
{{- end -}}
{{- dict "services" $services "routes" $routes | toJson -}}
{{- end -}}

{{/*
Deep merge for values: maps are merged key by key, anything else in `override` replaces `base`
(unlike sprig's merge, false, 0 and "" do override). Args: base, override. Returns YAML.
*/}}
{{- define "byrd.deepMerge" -}}
{{- $merged := deepCopy (.base | default dict) -}}
{{- range $key, $value := (.override | default dict) -}}
{{- $current := get $merged $key -}}
{{- if and (kindIs "map" $value) (kindIs "map" $current) -}}
{{- $_ := set $merged $key (include "byrd.deepMerge" (dict "base" $current "override" $value) | fromYaml) -}}
{{- else -}}
{{- $_ := set $merged $key $value -}}
{{- end -}}
{{- end -}}
{{- toYaml $merged -}}
{{- end -}}

{{/* A service's values: serviceDefaults overlaid by services.<name>. Args: root, name. Use with fromYaml. */}}
{{- define "byrd.serviceValues" -}}
{{- $override := get .root.Values.services .name | default dict -}}
{{- include "byrd.deepMerge" (dict "base" .root.Values.serviceDefaults "override" $override) -}}
{{- end -}}

{{/*
The services whose /docs/json api-docs reads (every enabled service with public routes but itself,
as its ROUTE_TABLE lists them); none when api-docs is not deployed. Args: root. Use with fromJsonArray.
*/}}
{{- define "byrd.docsSources" -}}
{{- $sources := list -}}
{{- $docs := include "byrd.serviceValues" (dict "root" .root "name" "api-docs") | fromYaml -}}
{{- if and (hasKey .root.Values.services "api-docs") $docs.enabled -}}
{{- range (include "byrd.enabledRouteTable" .root | fromJson).routes -}}
{{- if and (ne .service "api-docs") (not (has .service $sources)) -}}
{{- $sources = append $sources .service -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- toJson $sources -}}
{{- end -}}

{{/* A NetworkPolicy peer: the pods of one service of this release. Args: root, component. */}}
{{- define "byrd.podPeer" -}}
- podSelector:
    matchLabels:
      {{- include "byrd.selectorLabels" . | nindent 6 }}
{{- end -}}

{{/*
The longest work a service may have in flight at SIGTERM, which its shutdownGraceMs must outlast
(past the grace it exits 1, cutting that work off): ms is the service's own default, env the
variable of services.<name>.env that changes it (none: fixed in its code). A chart test keeps ms
equal to the services' source.
*/}}
{{- define "byrd.inFlightLimits" -}}
payments: { env: ACQUIRER_TIMEOUT_MS, ms: 20000, what: how long a payment waits for the acquirer }
hosted-form-bff: { env: "", ms: 30000, what: "how long a shopper's payment waits for rpc.payments.create (fixed in its code)" }
webhook-service: { env: WEBHOOK_TIMEOUT_MS, ms: 10000, what: how long one webhook delivery may take }
{{- end -}}

{{/* The HTTP port of a service, from the route table. Args: root, name. */}}
{{- define "byrd.servicePort" -}}
{{- $table := include "byrd.routeTable" .root | fromJson -}}
{{- $entry := get $table.services .name | default dict -}}
{{- int (get $entry "port") -}}
{{- end -}}

{{/* Image of a service. Args: root, name, svc (its merged values). */}}
{{- define "byrd.image" -}}
{{- $img := .svc.image | default dict -}}
{{- $repository := $img.repository | default (printf "%s/%s%s" .root.Values.image.registry .root.Values.image.namePrefix .name) -}}
{{- if $img.digest -}}
{{- printf "%s@%s" $repository $img.digest -}}
{{- else -}}
{{- printf "%s:%s" $repository (include "byrd.imageTag" .) -}}
{{- end -}}
{{- end -}}

{{/* Tag of a service's image: its own, else image.tag, else the chart's appVersion. Args: root, svc. */}}
{{- define "byrd.imageTag" -}}
{{- $img := .svc.image | default dict -}}
{{- $img.tag | default .root.Values.image.tag | default .root.Chart.AppVersion | toString -}}
{{- end -}}

{{- define "byrd.scheme" -}}
{{- if .Values.ingress.tls.enabled -}}https{{- else -}}http{{- end -}}
{{- end -}}

{{- define "byrd.publicBaseUrl" -}}
{{- .Values.publicBaseUrl | default (printf "%s://%s" (include "byrd.scheme" .) .Values.ingress.hosts.gateway) -}}
{{- end -}}

{{/*
Plain environment of a service (its ConfigMap). Args: root, name, svc. Returns YAML; the Deployment
hashes it into checksum/config so a change rolls the pods.
*/}}
{{- define "byrd.configData" -}}
{{- $root := .root -}}
{{- $data := dict
  "NODE_ENV" "production"
  "HTTP_HOST" "0.0.0.0"
  "HTTP_PORT" (include "byrd.servicePort" (dict "root" $root "name" .name))
  "LOG_LEVEL" (toString .svc.logLevel)
  "PUBLIC_BASE_URL" (include "byrd.publicBaseUrl" $root)
  "TRUSTED_PROXIES" (toString $root.Values.trustedProxies)
  "SHUTDOWN_GRACE_MS" (toString (int .svc.shutdownGraceMs))
-}}
{{- if .svc.nats.enabled -}}
{{- $_ := set $data "NATS_URL" (toString $root.Values.nats.url) -}}
{{- $_ := set $data "NATS_SUBJECT_PREFIX" (toString $root.Values.nats.subjectPrefix) -}}
{{- $_ := set $data "EVENTS_STREAM" (toString $root.Values.nats.eventsStream) -}}
{{- $_ := set $data "EVENTS_STREAM_REPLICAS" (toString $root.Values.nats.streamReplicas) -}}
{{- $_ := set $data "API_KEYS_BUCKET" (toString $root.Values.nats.apiKeysBucket) -}}
{{- $_ := set $data "MERCHANTS_BUCKET" (toString $root.Values.nats.merchantsBucket) -}}
{{- range $key, $value := include "byrd.natsTlsEnv" $root | fromYaml -}}
{{- $_ := set $data $key $value -}}
{{- end -}}
{{- end -}}
{{- if .svc.database.enabled -}}
{{- $_ := set $data "DATABASE_POOL_SIZE" (toString (int .svc.database.poolSize)) -}}
{{- $_ := set $data "DATABASE_STATEMENT_TIMEOUT_MS" (toString (int .svc.database.statementTimeoutMs)) -}}
{{- end -}}
{{- with dig "limits" "memory" "" (.svc.resources | default dict) -}}
{{- $_ := set $data "NODE_OPTIONS" (printf "%s --max-old-space-size=%d" $root.Values.nodeOptions (include "byrd.oldSpaceMiB" .| int)) -}}
{{- end -}}
{{- range $key, $value := .svc.env -}}
{{- $_ := set $data $key (tpl (toString $value) $root) -}}
{{- end -}}
{{- toYaml $data -}}
{{- end -}}

{{/*
V8's old-space limit for a container memory limit: 3/4 of it in MiB less 48 MiB of young generation
(nodeOptions' 16 MB semi-spaces), at least 64; deploy/node-options.mjs has the same rule (oldSpaceMiB).
*/}}
{{- define "byrd.oldSpaceMiB" -}}
{{- $mib := divf (include "byrd.memoryBytes" . | float64) 1048576.0 -}}
{{- max 64 (sub (int (mulf $mib 0.75)) 48) -}}
{{- end -}}

{{/*
Bytes of a Kubernetes memory quantity (512Mi, 1Gi, 1.5Gi, 600M, or bytes), as a whole number.
*/}}
{{- define "byrd.memoryBytes" -}}
{{- $quantity := toString . -}}
{{- $units := dict "Ki" 1024.0 "Mi" 1048576.0 "Gi" 1073741824.0 "k" 1000.0 "M" 1000000.0 "G" 1000000000.0 -}}
{{- $bytes := 0.0 -}}
{{- $matched := false -}}
{{- range $suffix := list "Ki" "Mi" "Gi" "k" "M" "G" -}}
{{- if and (not $matched) (hasSuffix $suffix $quantity) -}}
{{- $bytes = mulf (float64 (trimSuffix $suffix $quantity)) (get $units $suffix) -}}
{{- $matched = true -}}
{{- end -}}
{{- end -}}
{{- if not $matched -}}
{{- if not (regexMatch "^[0-9]+$" $quantity) -}}
{{- fail (printf "resources.limits.memory %q: use a quantity such as 512Mi, 1Gi or 600M" $quantity) -}}
{{- end -}}
{{- $bytes = float64 $quantity -}}
{{- end -}}
{{- printf "%.0f" $bytes -}}
{{- end -}}

{{/*
env entries taken from existing Secrets. Args: root, svc, and which to include: database (the
service's DATABASE_URL), nats (NATS_USER/NATS_PASSWORD when nats.auth.existingSecret is set), extra
(the service's secretEnv). Returns YAML list items, or nothing.
*/}}
{{- define "byrd.secretEnv" -}}
{{- $entries := list -}}
{{- if .database -}}
{{- $entries = append $entries (dict "name" "DATABASE_URL" "secret" .svc.database.existingSecret "key" .svc.database.key) -}}
{{- end -}}
{{- if and .nats .root.Values.nats.auth.existingSecret -}}
{{- $auth := .root.Values.nats.auth -}}
{{- $entries = append $entries (dict "name" "NATS_USER" "secret" $auth.existingSecret "key" $auth.userKey) -}}
{{- $entries = append $entries (dict "name" "NATS_PASSWORD" "secret" $auth.existingSecret "key" $auth.passwordKey) -}}
{{- end -}}
{{- if .extra -}}
{{- range $envName, $ref := .svc.secretEnv -}}
{{- $entries = append $entries (dict "name" $envName "secret" $ref.existingSecret "key" $ref.key) -}}
{{- end -}}
{{- end -}}
{{- range $entries }}
- name: {{ .name }}
  valueFrom:
    secretKeyRef:
      name: {{ .secret | quote }}
      key: {{ .key | quote }}
{{- end -}}
{{- end -}}

{{/*
TLS to NATS (nats.tls): the files a pod that talks to NATS reads (NATS_TLS_*), their Secrets'
volumes and mounts. Each renders nothing without nats.tls.caSecret or .clientCertSecret. Arg: root.
*/}}
{{- define "byrd.natsTlsEnv" -}}
{{- with .Values.nats.tls.caSecret }}
NATS_TLS_CA_FILE: /etc/byrd/nats-tls/ca/ca.crt
{{- end }}
{{- with .Values.nats.tls.clientCertSecret }}
NATS_TLS_CERT_FILE: /etc/byrd/nats-tls/client/tls.crt
NATS_TLS_KEY_FILE: /etc/byrd/nats-tls/client/tls.key
{{- end }}
{{- end -}}

{{- define "byrd.natsTlsVolumes" -}}
{{- with .Values.nats.tls.caSecret }}
- name: nats-tls-ca
  secret:
    secretName: {{ . | quote }}
    items:
      - key: {{ $.Values.nats.tls.caKey | quote }}
        path: ca.crt
{{- end }}
{{- with .Values.nats.tls.clientCertSecret }}
- name: nats-tls-client
  secret:
    secretName: {{ . | quote }}
    # 0440: the pod's fsGroup reads the key, no one else.
    defaultMode: 288
    items:
      - key: tls.crt
        path: tls.crt
      - key: tls.key
        path: tls.key
{{- end }}
{{- end -}}

{{- define "byrd.natsTlsMounts" -}}
{{- with .Values.nats.tls.caSecret }}
- name: nats-tls-ca
  mountPath: /etc/byrd/nats-tls/ca
  readOnly: true
{{- end }}
{{- with .Values.nats.tls.clientCertSecret }}
- name: nats-tls-client
  mountPath: /etc/byrd/nats-tls/client
  readOnly: true
{{- end }}
{{- end -}}

{{/* The writable /tmp of services and hook Jobs (the root filesystem is read-only). Args: svc. */}}
{{- define "byrd.tmpVolume" -}}
- name: tmp
  emptyDir:
    sizeLimit: {{ .svc.tmpSizeLimit }}
{{- end -}}

{{/*
Seconds of a Prometheus duration (30s, 1m30s, 500ms). Returns a number (float).
*/}}
{{- define "byrd.durationSeconds" -}}
{{- $seconds := 0.0 -}}
{{- $units := dict "ms" 0.001 "s" 1.0 "m" 60.0 "h" 3600.0 -}}
{{- range $part := regexFindAll "[0-9]+(ms|s|m|h)" (toString .) -1 -}}
{{- $unit := regexFind "(ms|s|m|h)$" $part -}}
{{- $seconds = addf $seconds (mulf (float64 (trimSuffix $unit $part)) (get $units $unit)) -}}
{{- end -}}
{{- $seconds -}}
{{- end -}}

{{/*
The PromQL label matchers of this release's scrape targets: the release namespace and the jobs the
ServiceMonitor gives them (each job is named after its Service). Args: root.
*/}}
{{- define "byrd.metricsSelector" -}}
{{- $jobs := list -}}
{{- range $name, $_ := .root.Values.services -}}
{{- $svc := include "byrd.serviceValues" (dict "root" $.root "name" $name) | fromYaml -}}
{{- if $svc.enabled -}}
{{- $jobs = append $jobs (include "byrd.serviceFullname" (dict "root" $.root "name" $name)) -}}
{{- end -}}
{{- end -}}
{{- printf "namespace=%q, job=~%q" .root.Release.Namespace (join "|" $jobs) -}}
{{- end -}}
