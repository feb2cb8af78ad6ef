-- Argo CD health of a pinery.dev VectorIndex.
-- Healthy: the Ready condition is True and the operator has acted on the current spec
-- (status.observedGeneration equals metadata.generation). Degraded: phase Failed, which needs a
-- change to the spec, the Secret or the Pinecone account. Progressing: anything else.
local hs = {status = "Progressing", message = "Waiting for the operator"}
if obj.status == nil then
  return hs
end

local function condition(kind)
  if obj.status.conditions == nil then
    return nil
  end
  for _, c in ipairs(obj.status.conditions) do
    if c.type == kind then
      return c
    end
  end
  return nil
end

local ready = condition("Ready")
local synced = condition("Synced")

if obj.status.phase == "Failed" then
  hs.status = "Degraded"
  hs.message = "Failed"
  for _, c in ipairs({ready, synced}) do
    if c ~= nil and c.status == "False" and c.message ~= nil and c.message ~= "" then
      hs.message = c.message
      break
    end
  end
  return hs
end

local generation = obj.metadata.generation
local observed = obj.status.observedGeneration
if generation ~= nil and observed ~= generation then
  hs.message = "Waiting for the operator to act on generation " .. tostring(generation)
  return hs
end

if ready ~= nil and ready.status == "True" then
  hs.status = "Healthy"
  if obj.status.host ~= nil then
    hs.message = "Ready at " .. obj.status.host
  else
    hs.message = "Ready"
  end
  return hs
end

if ready ~= nil and ready.message ~= nil and ready.message ~= "" then
  hs.message = ready.message
elseif obj.status.phase ~= nil then
  hs.message = obj.status.phase
end
return hs
